"""The driver's side of "the zoo is the only shared storage": publish what the nodes will pull.

Before a cell's shards leave this machine, its dataset and its model (with the image as a
`docker save` archive for the Docker runner) are pushed to the zoo remote the nodes read
(`asrbench.zoo.push`: content-addressed and idempotent, so unchanged files are not uploaded
again). Which version a given content was published as is remembered under
`<cache>/executor/published/<remote>/`, keyed by the content's existing identity (dataset hash,
image ID or local model identity); a remembered version is reused after one check that the
remote still holds its manifest, so a rerun does not `docker save` an image again.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from pathlib import Path
from typing import Any

from asrbench.dataset import Dataset
from asrbench.executors.base import PreflightError
from asrbench.executors.worker import EntryRef, ZooSpec
from asrbench.fsio import atomic_write_json
from asrbench.modelcard import Model
from asrbench.settings import settings


class Publisher:
    """Pushes datasets and models to one zoo remote, once per content, thread-safely."""

    def __init__(self, zoo_config: Path | None = None, remote: str | None = None):
        from asrbench.zoo.config import load_config
        from asrbench.zoo.errors import ZooError

        try:
            self.cfg = load_config(zoo_config)
            spec = self.cfg.remote(remote)
        except ZooError as exc:
            raise PreflightError(f"the zoo the nodes read: {exc}") from None
        fields = dataclasses.asdict(spec)
        if spec.scheme == "file":  # nodes know nothing of the driver's zoo.yaml folder
            fields["url"] = "file://" + str(spec.file_root(self.cfg.base).resolve())
        self.spec = spec
        self.zoo = ZooSpec(spec.name, tuple(sorted(fields.items())))
        self._lock = threading.Lock()
        self._memo: dict[tuple, Any] = {}
        self.stats = {"pushed": 0, "reused": 0, "bytes_uploaded": 0, "seconds": 0.0}

    # -- checks --------------------------------------------------------------------------

    def check_reachable(self) -> None:
        """The driver itself must be able to write there (PreflightError naming the remote)."""
        from asrbench.zoo.errors import ZooError
        from asrbench.zoo.remote import open_remote

        try:
            rem = open_remote(self.zoo.remote(), self.cfg.base)
            try:
                rem.get_bytes("entries/.asrbench-probe")
            finally:
                rem.close()
        except ZooError as exc:
            raise PreflightError(
                f"the driver cannot read zoo remote {self.spec.name!r}, which "
                f"the nodes fetch from: {exc}"
            ) from None

    # -- publishing -----------------------------------------------------------------------

    def dataset(self, ds: Dataset, ds_hash: str) -> EntryRef:
        from asrbench.identity import file_sha256

        card = ds.root / "dataset.yaml"
        tag = {"hash": ds_hash, "card": file_sha256(card) if card.is_file() else None}
        return self._publish("dataset", ds.id, ds.root, ds_hash, tag)[0]

    def model(
        self, mdl: Model, runner: str, identity: str, image_tag: str | None
    ) -> tuple[EntryRef, tuple[str, str] | None]:
        """The model's zoo version, and (tag, image ID) when its shards run in Docker."""
        image = (image_tag, identity) if runner == "docker" and image_tag else None
        tag = {"identity": identity, "source": mdl.source_hash(), "image": list(image or [])}
        ref, _ = self._publish("model", mdl.id, mdl.root, identity, tag, image)
        return ref, image

    def _record(self, kind: str, entry_id: str, identity: str) -> Path:
        name = identity.rsplit(":", 1)[-1][:24]
        return (
            settings().cache
            / "executor"
            / "published"
            / self.spec.name
            / f"{kind}-{entry_id}-{name}.json"
        )

    def _publish(
        self,
        kind: str,
        entry_id: str,
        root: Path,
        identity: str,
        tag: dict,
        image: tuple[str, str] | None = None,
    ) -> tuple[EntryRef, bool]:
        import time

        from asrbench.zoo import push
        from asrbench.zoo.errors import ZooError

        key = (kind, entry_id, identity, json.dumps(tag, sort_keys=True))
        with self._lock:
            if key in self._memo:
                return self._memo[key], False
            record = self._record(kind, entry_id, identity)
            where = {"url": self.zoo.remote().url, "endpoint": self.spec.endpoint_url}
            version = self._recorded(record, kind, entry_id, where, tag)
            if version is None:
                t0 = time.monotonic()
                try:
                    res = push(
                        kind,
                        entry_id,
                        source=root,
                        remote=self.spec.name,
                        config=self.cfg,
                        with_image=image is not None,
                        image_ref=image[0] if image else None,
                    )
                except ZooError as exc:
                    raise ZooError(
                        f"publishing {kind} {entry_id} from {root} to zoo remote "
                        f"{self.spec.name!r} for the cluster failed: {exc}"
                    ) from None
                version = res.version
                self.stats["pushed"] += 1
                self.stats["bytes_uploaded"] += res.bytes_uploaded
                self.stats["seconds"] += time.monotonic() - t0
                atomic_write_json(record, {**where, **tag, "version": version})
            else:
                self.stats["reused"] += 1
            ref = EntryRef(kind, entry_id, version)
            self._memo[key] = ref
            return ref, True

    def _recorded(
        self, record: Path, kind: str, entry_id: str, where: dict, tag: dict
    ) -> str | None:
        """A version this content was published as before, if the remote still holds it."""
        from asrbench.zoo.manifest import manifest_key
        from asrbench.zoo.remote import open_remote

        try:
            data = json.loads(record.read_text())
        except (OSError, ValueError):
            return None
        if {k: data.get(k) for k in (*where, *tag)} != {**where, **tag}:
            return None
        version = data.get("version")
        rem = open_remote(self.zoo.remote(), self.cfg.base)
        try:
            present = rem.stat(manifest_key(kind, entry_id, version)) is not None
        finally:
            rem.close()
        return version if present else None
