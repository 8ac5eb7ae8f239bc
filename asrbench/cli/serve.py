"""`asrbench serve` (ops/serve): a model as an OpenAI-compatible transcription endpoint."""

from __future__ import annotations

import os

import typer

from asrbench.errors import InputError

app = typer.Typer(add_completion=False, help=__doc__)


@app.command()
def serve(
    model: str = typer.Option(..., "-m", "--model", help="model ID (models/<ID>) or folder"),
    runner: str = typer.Option("auto", "--runner", help="docker, local or auto"),
    host: str = typer.Option("127.0.0.1", "--host", help="address to bind (loopback default)"),
    port: int = typer.Option(8000, "--port", help="port; 0 picks a free one"),
    api_key_env: str = typer.Option(
        "", "--api-key-env",
        help="name of an environment variable holding the key clients must send as Bearer"),
    timeout: float = typer.Option(600, "--timeout",
                                  help="seconds a request may take inside the model"),
) -> None:
    from asrbench.resolve import resolve_model
    from asrbench.runners import RunOptions, get_runner
    from asrbench.serve.server import TranscriptionService, make_server

    key = None
    if api_key_env:
        key = os.environ.get(api_key_env)
        if not key:
            raise InputError(f"--api-key-env {api_key_env}: that variable is not set")
    mdl = resolve_model(model)
    run = get_runner(runner)
    service = TranscriptionService(mdl, run, RunOptions(timeout_s=timeout))
    typer.echo(f"serve: preparing {mdl.id} ({run.name} runner): image, then the model, "
               "loaded once and kept warm...", err=True)
    service.prepare()
    server = make_server(service, host, port, key)
    bound_host, bound_port = server.server_address[:2]
    # The first stdout line is the base URL, for scripts and tests that start us on port 0.
    print(f"http://{bound_host}:{bound_port}/v1", flush=True)
    typer.echo(f"serve: {mdl.id} at http://{bound_host}:{bound_port}/v1/audio/transcriptions "
               "(OpenAI-compatible); Ctrl-C stops", err=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        service.close()

