"""Downloads over real HTTP on loopback (a Range-capable server started here) and file://:
an interrupted transfer resumes where it stopped, a truncated or corrupted archive is detected,
and a failed recipe leaves no dataset and no half archive behind."""

from __future__ import annotations

import hashlib
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from asrbench.importers.download import Archive, DownloadError, extract, fetch
from tests.importers import recipe_mirrors


class _Server:
    """Serves one folder with Range support; `cut_after` bytes, then drops the connection once."""

    def __init__(self, root: Path) -> None:
        self.root, self.cut_after, self.requests = root, None, []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a: object) -> None:
                pass

            def do_GET(self) -> None:
                path = server.root / self.path.split("?")[0].lstrip("/")
                if not path.is_file():
                    self.send_error(404)
                    return
                data = path.read_bytes()
                start = 0
                rng = self.headers.get("Range")
                server.requests.append(rng)
                if rng:
                    start = int(rng.split("=")[1].split("-")[0])
                    self.send_response(206)
                    self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
                else:
                    self.send_response(200)
                body = data[start:]
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if server.cut_after is not None:
                    self.wfile.write(body[: server.cut_after])
                    server.cut_after = None
                    self.wfile.flush()
                    self.connection.shutdown(2)  # the network drops mid-transfer
                    return
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()


@pytest.fixture
def mirror(shared: Path, tmp_path: Path):
    base, checksums, expect = recipe_mirrors.librispeech(shared, tmp_path / "mirror")
    server = _Server(base)
    yield base, checksums, expect, server
    server.close()


def _archive(base: Path) -> tuple[Path, Archive]:
    path = base / "resources" / "12" / "test-clean.tar.gz"
    data = path.read_bytes()
    return path, Archive(
        "resources/12/test-clean.tar.gz",
        size=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
        checksum_source="test",
    )


def test_interrupted_download_resumes_with_a_range_request(mirror, tmp_path: Path) -> None:
    base, _, _, server = mirror
    path, archive = _archive(base)
    server.cut_after = path.stat().st_size // 3
    url = f"{server.url}/{archive.path}"
    with pytest.raises(DownloadError, match="rerun the same command to resume"):
        fetch(url, archive, tmp_path / "cache")
    part = next((tmp_path / "cache" / "downloads").rglob("*.part"))
    assert part.stat().st_size == path.stat().st_size // 3
    got, digests = fetch(url, archive, tmp_path / "cache")
    assert server.requests[-1] == f"bytes={path.stat().st_size // 3}-"
    assert got.read_bytes() == path.read_bytes() and digests["sha256"] == archive.sha256
    assert not part.exists()
    n = len(server.requests)
    fetch(url, archive, tmp_path / "cache")  # verified copy in the cache: no request
    assert len(server.requests) == n


def test_a_corrupted_download_is_fetched_again_and_never_kept(mirror, tmp_path: Path) -> None:
    base, _, _, server = mirror
    path, archive = _archive(base)
    url = f"{server.url}/{archive.path}"
    folder = tmp_path / "cache" / "downloads"
    # A previous run left a complete-looking file whose bytes are wrong (disk or proxy damage).
    fetch(url, archive, tmp_path / "cache")
    cached = next(p for p in folder.rglob("test-clean.tar.gz"))
    cached.write_bytes(b"x" * path.stat().st_size)
    got, _ = fetch(url, archive, tmp_path / "cache")
    assert got.read_bytes() == path.read_bytes()
    wrong = Archive(archive.path, sha256="0" * 64, checksum_source="published")
    with pytest.raises(DownloadError, match="downloaded twice, the file was removed"):
        fetch(url + "?other", wrong, tmp_path / "cache")
    assert not [p for p in folder.rglob("*") if p.is_file() and "other" in str(p)]


def test_truncated_archive_is_detected(mirror, tmp_path: Path) -> None:
    base, _, _, _ = mirror
    path, _ = _archive(base)
    cut = tmp_path / "cut.tar.gz"
    cut.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with pytest.raises(DownloadError, match="truncated or corrupt"):
        extract(cut, tmp_path / "x", lambda n: True)


def test_recipe_interrupted_then_resumed_leaves_nothing_half_done(
    mirror, tmp_path: Path, cli, monkeypatch
) -> None:
    base, checksums, expect, server = mirror
    monkeypatch.setenv("ASRBENCH_DATASETS_DIR", str(tmp_path / "datasets"))
    monkeypatch.setenv("ASRBENCH_CACHE", str(tmp_path / "cache"))
    path, _ = _archive(base)
    server.cut_after = 1000
    args = [
        "import",
        "librispeech-test-clean",
        "--from",
        server.url,
        "--id",
        "ls",
        "--checksum",
        checksums[0],
    ]
    code, _, err = cli(*args)
    assert code == 1 and "rerun the same command to resume" in err
    assert not list((tmp_path / "datasets").glob("*"))
    code, _, err = cli(*args)
    assert code == 0, err
    assert server.requests[-1] == "bytes=1000-"
    from asrbench.dataset import load_dataset

    assert {u.id for u in load_dataset(tmp_path / "datasets" / "ls")} == set(expect)


def test_recipe_with_a_truncated_archive_in_the_mirror(
    mirror, tmp_path: Path, cli, monkeypatch
) -> None:
    """No published size: the truncation shows at extraction; the bad copy is dropped."""
    base, _, _, _ = mirror
    monkeypatch.setenv("ASRBENCH_DATASETS_DIR", str(tmp_path / "datasets"))
    monkeypatch.setenv("ASRBENCH_CACHE", str(tmp_path / "cache"))
    path, _ = _archive(base)
    path.write_bytes(path.read_bytes()[:-3000])
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    code, _, err = cli(
        "import",
        "librispeech-test-clean",
        "--from",
        base.as_uri(),
        "--id",
        "t",
        "--checksum",
        f"test-clean.tar.gz=sha256:{digest}",
    )
    assert code == 1 and "truncated or corrupt" in err
    assert not list((tmp_path / "datasets").glob("*"))
    assert not list((tmp_path / "cache" / "downloads").rglob("test-clean.tar.gz"))
