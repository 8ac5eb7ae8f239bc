"""Remotes: a small interface over a bucket prefix (boto3) or a local folder.

Keys are '/'-separated paths under the remote's root. Every write of a whole object is atomic
for readers: S3 makes a PUT or a completed multipart upload visible at once, and the folder
remote writes a temporary file and renames it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from asrbench.fsio import atomic_file
from asrbench.zoo.config import RemoteSpec
from asrbench.zoo.errors import ZooError, ZooInputError, ZooMissingObject

Progress = Callable[[int], None]  # called with a number of bytes just transferred

MULTIPART_CHUNK = 8 * 1024 * 1024


def _noop(_: int) -> None:
    pass


class Remote(ABC):
    """What push and pull need from a store. Implementations must be thread-safe."""

    name: str
    url: str
    concurrency: int = 8

    @abstractmethod
    def stat(self, key: str) -> int | None:
        """Size of the object at `key`, or None if there is none."""

    @abstractmethod
    def get_bytes(self, key: str) -> bytes | None:
        """Whole (small) object, or None if missing."""

    @abstractmethod
    def put_bytes(self, key: str, data: bytes, if_absent: bool = False) -> bool:
        """Write a small object; with if_absent, return False (writing nothing) if it exists."""

    @abstractmethod
    def read_range(self, key: str, start: int, end: int) -> bytes:
        """Bytes [start, end) of an object."""

    @abstractmethod
    def list(self, prefix: str) -> Iterator[tuple[str, int]]:
        """(key, size) of every object whose key starts with `prefix`."""

    @abstractmethod
    def upload_files(self, items: Iterable[tuple[Path, str]], progress: Progress = _noop) -> None:
        """Upload local files to keys, concurrently; each object appears whole or not at all.

        `items` may be a generator: uploads start as it yields, so the caller can hash the next
        files while the first ones travel.
        """

    def exists(self) -> bool:
        """Whether the remote itself (folder, bucket) is there; asked only to word an error."""
        return True

    def missing_object(self, key: str) -> ZooMissingObject:
        return ZooMissingObject(
            f"object {key} is missing on remote {self.name!r} ({self.url}); `ops/zoo verify` "
            "lists what is missing, `--repair` uploads it again from a good local copy"
        )

    def delete(self, key: str) -> None:  # used by tests and maintenance only
        raise NotImplementedError

    def close(self) -> None:
        return None


class FileRemote(Remote):
    """A folder used as a remote (`file://path`): the embedded default and the offline case."""

    def __init__(self, name: str, root: Path, concurrency: int = 8):
        self.name = name
        self.root = Path(root)
        self.url = f"file://{self.root}"
        self.concurrency = concurrency

    def _path(self, key: str) -> Path:
        return self.root / key

    def stat(self, key: str) -> int | None:
        try:
            return self._path(key).stat().st_size
        except FileNotFoundError:
            return None

    def get_bytes(self, key: str) -> bytes | None:
        try:
            return self._path(key).read_bytes()
        except FileNotFoundError:
            return None

    def _tmp(self, path: Path) -> Path:
        return path.with_name(f".{path.name}.tmp{os.getpid()}.{threading.get_ident()}")

    def put_bytes(self, key: str, data: bytes, if_absent: bool = False) -> bool:
        path = self._path(key)
        try:
            with atomic_file(path, tmp=self._tmp(path), exclusive=if_absent) as f:
                f.write(data)
        except FileExistsError:  # if_absent, and it was there
            return False
        return True

    def exists(self) -> bool:
        return self.root.is_dir()

    def read_range(self, key: str, start: int, end: int) -> bytes:
        try:
            with open(self._path(key), "rb") as f:
                f.seek(start)
                return f.read(end - start)
        except FileNotFoundError:
            raise self.missing_object(key) from None

    def list(self, prefix: str) -> Iterator[tuple[str, int]]:
        base = self.root
        start = base / prefix if prefix.endswith("/") else (base / prefix).parent
        if not start.is_dir():
            return
        for dirpath, _dirs, files in os.walk(start):
            for fn in files:
                if fn.startswith("."):
                    continue
                p = Path(dirpath) / fn
                key = p.relative_to(base).as_posix()
                if key.startswith(prefix):
                    yield key, p.stat().st_size

    def _copy_one(self, src: Path, key: str, progress: Progress) -> None:
        dest = self._path(key)
        with open(src, "rb") as fi, atomic_file(dest, tmp=self._tmp(dest)) as fo:
            while block := fi.read(MULTIPART_CHUNK):
                fo.write(block)
                progress(len(block))

    def upload_files(self, items: Iterable[tuple[Path, str]], progress: Progress = _noop) -> None:
        with ThreadPoolExecutor(self.concurrency) as pool:
            for fut in [pool.submit(self._copy_one, p, k, progress) for p, k in items]:
                fut.result()

    def delete(self, key: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self._path(key).unlink()


class S3Remote(Remote):
    """An S3-compatible bucket prefix through boto3 (AWS S3, SeaweedFS, MinIO, Ceph RGW)."""

    def __init__(self, spec: RemoteSpec):
        import boto3
        import botocore
        from botocore.config import Config

        self.name = spec.name
        self.url = spec.url
        self.spec = spec
        self.bucket, self.prefix = spec.bucket_prefix()
        self.concurrency = spec.effective_concurrency
        config = Config(
            retries={"max_attempts": spec.max_attempts, "mode": "standard"},
            connect_timeout=spec.connect_timeout,
            read_timeout=spec.read_timeout,
            max_pool_connections=max(10, spec.effective_concurrency * 2),
            signature_version=botocore.UNSIGNED if spec.anonymous else None,
            s3={"addressing_style": "path"} if spec.endpoint_url else None,
        )
        with self._errors("open"):
            session = boto3.Session(profile_name=spec.profile) if spec.profile else boto3.Session()
            region = (
                spec.region or session.region_name or ("us-east-1" if spec.endpoint_url else None)
            )
            self.client = session.client(
                "s3", endpoint_url=spec.endpoint_url, region_name=region, config=config
            )

    def _key(self, key: str) -> str:
        return f"{self.prefix}/{key}" if self.prefix else key

    @contextlib.contextmanager
    def _errors(self, what: str, key: str = "") -> Iterator[None]:
        """Turn botocore's exceptions into messages that say what to do (and name no secret)."""
        from botocore import exceptions as bx

        where = f"remote {self.name!r} ({self.url}" + (
            f", endpoint {self.spec.endpoint_url})" if self.spec.endpoint_url else ")"
        )
        cred_hint = (
            f"set AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, or configure profile "
            f"{self.spec.profile!r} in ~/.aws/credentials"
            if self.spec.profile
            else "set AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or AWS_PROFILE, or add "
            "`profile:` (or `anonymous: true` for a public zoo) to the remote in zoo.yaml"
        )
        try:
            yield
        except bx.ProfileNotFound as exc:
            raise ZooInputError(
                f"{where}: AWS profile {self.spec.profile!r} not found; {cred_hint}"
            ) from exc
        except (bx.NoCredentialsError, bx.PartialCredentialsError) as exc:
            raise ZooInputError(f"{where}: no usable credentials found; {cred_hint}") from exc
        except (
            bx.EndpointConnectionError,
            bx.ConnectTimeoutError,
            bx.ReadTimeoutError,
            bx.ConnectionClosedError,
        ) as exc:
            raise ZooError(
                f"{where}: server unreachable during {what} {key} after "
                f"{self.spec.max_attempts} attempt(s) ({type(exc).__name__}); check the endpoint "
                "URL and the network, then rerun: finished transfers are kept"
            ) from exc
        except bx.ClientError as exc:
            err = exc.response.get("Error", {})
            code = str(err.get("Code", ""))
            status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
            if code in (
                "InvalidAccessKeyId",
                "SignatureDoesNotMatch",
                "InvalidToken",
                "ExpiredToken",
                "AuthorizationHeaderMalformed",
            ):
                raise ZooInputError(
                    f"{where}: the server rejected the credentials ({code}) during {what}; "
                    f"{cred_hint} with a valid key pair"
                ) from exc
            if code in ("AccessDenied", "Forbidden") or status == 403:
                raise ZooInputError(
                    f"{where}: access denied during {what} {key} ({code or status}); the "
                    f"credentials lack permission on bucket {self.bucket!r}, or none were given; "
                    f"{cred_hint}"
                ) from exc
            if code == "NoSuchBucket":
                raise ZooInputError(
                    f"{where}: bucket {self.bucket!r} does not exist; create it first"
                ) from exc
            raise ZooError(
                f"{where}: {what} {key} failed: {code or status}: {err.get('Message', '')}"
            ) from exc

    @staticmethod
    def _missing(exc: Exception) -> bool:
        from botocore.exceptions import ClientError

        if not isinstance(exc, ClientError):
            return False
        code = str(exc.response.get("Error", {}).get("Code", ""))
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        if code == "NoSuchBucket":
            return False  # the remote itself is missing, not one object: said as such
        return code in ("404", "NoSuchKey", "NotFound") or status == 404

    def exists(self) -> bool:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            self.client.head_bucket(Bucket=self.bucket)
        except ClientError as exc:
            return exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") != 404
        except BotoCoreError:
            return True  # unreachable, no credentials: reported by the call that failed
        return True

    def stat(self, key: str) -> int | None:
        with self._errors("stat", key):
            try:
                return int(
                    self.client.head_object(Bucket=self.bucket, Key=self._key(key))["ContentLength"]
                )
            except Exception as exc:
                if self._missing(exc):
                    return None
                if getattr(exc, "response", {}).get("Error", {}).get("Code") == "403":
                    # HEAD replies carry no error body; a 1-byte GET tells a wrong key
                    # (SignatureDoesNotMatch) from a lack of permission (AccessDenied).
                    try:
                        self.client.get_object(
                            Bucket=self.bucket, Key=self._key(key), Range="bytes=0-0"
                        )
                    except Exception as probe:
                        if self._missing(probe):
                            raise exc from None
                        raise probe from None
                raise

    def get_bytes(self, key: str) -> bytes | None:
        with self._errors("get", key):
            try:
                return self.client.get_object(Bucket=self.bucket, Key=self._key(key))["Body"].read()
            except Exception as exc:
                if self._missing(exc):
                    return None
                raise

    def put_bytes(self, key: str, data: bytes, if_absent: bool = False) -> bool:
        from botocore.exceptions import ClientError

        extra = {"IfNoneMatch": "*"} if if_absent else {}
        with self._errors("put", key):
            try:
                self.client.put_object(Bucket=self.bucket, Key=self._key(key), Body=data, **extra)
            except ClientError as exc:
                code = str(exc.response.get("Error", {}).get("Code", ""))
                if if_absent and code in ("PreconditionFailed", "ConditionalRequestConflict"):
                    return False
                raise
        return True

    def read_range(self, key: str, start: int, end: int) -> bytes:
        if end <= start:
            return b""
        with self._errors("download", key):
            try:
                resp = self.client.get_object(
                    Bucket=self.bucket, Key=self._key(key), Range=f"bytes={start}-{end - 1}"
                )
            except Exception as exc:
                if self._missing(exc):
                    raise self.missing_object(key) from None
                raise
            return resp["Body"].read()

    def list(self, prefix: str) -> Iterator[tuple[str, int]]:
        full = self._key(prefix)
        cut = len(self.prefix) + 1 if self.prefix else 0
        with self._errors("list", prefix):
            pages = self.client.get_paginator("list_objects_v2").paginate(
                Bucket=self.bucket, Prefix=full
            )
            for page in pages:
                for obj in page.get("Contents", []):
                    yield obj["Key"][cut:], int(obj["Size"])

    def upload_files(self, items: Iterable[tuple[Path, str]], progress: Progress = _noop) -> None:
        from boto3.s3.transfer import TransferConfig, create_transfer_manager
        from s3transfer.subscribers import BaseSubscriber

        class _Sub(BaseSubscriber):
            def on_progress(self, future, bytes_transferred, **kwargs):
                progress(bytes_transferred)

        config = TransferConfig(
            multipart_threshold=MULTIPART_CHUNK,
            multipart_chunksize=MULTIPART_CHUNK,
            max_concurrency=self.concurrency,
        )
        # One transfer manager for all files: its pool spreads parts of big files and whole
        # small files over the same connections.
        with self._errors("upload"):
            with create_transfer_manager(self.client, config) as manager:
                futures = [
                    manager.upload(str(path), self.bucket, self._key(key), subscribers=[_Sub()])
                    for path, key in items
                ]
                for fut in futures:
                    fut.result()

    def delete(self, key: str) -> None:
        with self._errors("delete", key):
            self.client.delete_object(Bucket=self.bucket, Key=self._key(key))

    def close(self) -> None:
        self.client.close()


def open_remote(spec: RemoteSpec, base: Path) -> Remote:
    """Build the Remote for a spec; `base` resolves relative `file://` paths."""
    if spec.scheme == "file":
        return FileRemote(spec.name, spec.file_root(base), spec.effective_concurrency)
    if spec.scheme == "s3":
        return S3Remote(spec)
    raise ZooError(f"remote {spec.name!r}: unsupported URL {spec.url!r}")


def copy_file(src: Path, dest: Path) -> None:
    """Copy bytes (used when a hard link is impossible across file systems)."""
    shutil.copyfile(src, dest)
