"""The persistent cache (`.hexlint_cache/` at the project root): entries of plain data, never code.

An entry is one JSON file, named by its key, holding the key again, the payload and a seal: an HMAC-SHA256 of the
three under a secret kept in the user's own cache directory (never in the checkout). A cache directory that comes
with a checkout was sealed under another secret, so its entries are refused and rebuilt: a planted entry cannot hide
a finding, and an entry copied under another key does not match the key it holds. A truncated, corrupted,
foreign-format or half-written entry is refused the same way; writes go to a temporary file renamed into place, so a
reader never sees half an entry and two processes sharing the cache simply both write whole ones.

Keys are digests of what decides the payload (`key_of`): hexlint's own files (`build_id`), the files read and
their contents, the settings. What the payload depends on but only a run can tell (the headers a unit includes) goes
into the payload as dependencies, which the reader checks before trusting it (`dependencies_hold`).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import secrets
import tempfile

from hexlint.core import Diagnostic, Edit, Fix, Related, Severity, Span
from hexlint.discover import read_bytes_or_none

# typing.TYPE_CHECKING without importing typing at start-up: annotations are strings (postponed evaluation).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from typing import Any

FORMAT = 1

_SECRET_NAME = "seal-key"


class Store:
    """One cache directory. `get` gives a payload only when the entry is whole, sealed by this user and holds the
    key asked for; every other entry is a miss. Nothing here raises on a bad cache: a cache that cannot be read or
    written behaves as an empty one."""

    def __init__(self, directory: str, secret: bytes) -> None:
        self.directory = directory
        self._secret = secret
        self.refused = 0  # entries present but not trusted (corrupted, foreign, sealed elsewhere)

    def _path(self, namespace: str, key: str) -> str:
        return os.path.join(self.directory, namespace, key[:2], key + ".json")

    def _seal(self, namespace: str, key: str, payload_text: str) -> str:
        message = f"{FORMAT}\0{namespace}\0{key}\0{payload_text}".encode("utf-8", "surrogatepass")
        return hmac.new(self._secret, message, hashlib.sha256).hexdigest()

    def get(self, namespace: str, key: str) -> Any | None:
        try:
            with open(self._path(namespace, key), "rb") as handle:
                data = handle.read()
        except OSError:
            return None
        try:
            entry = json.loads(data.decode("utf-8", "surrogatepass"))
            payload_text = entry["payload"]
            trusted = (
                isinstance(entry, dict)
                and entry.get("format") == FORMAT
                and entry.get("namespace") == namespace
                and entry.get("key") == key
                and isinstance(payload_text, str)
                and hmac.compare_digest(str(entry.get("seal", "")), self._seal(namespace, key, payload_text))
            )
            payload = json.loads(payload_text) if trusted else None
        except (ValueError, KeyError, TypeError, UnicodeDecodeError):
            trusted, payload = False, None
        if not trusted:
            self.refused += 1
            return None
        return payload

    def put(self, namespace: str, key: str, payload: Any) -> None:
        payload_text = json.dumps(payload, separators=(",", ":"), sort_keys=True)
        entry = {
            "format": FORMAT,
            "namespace": namespace,
            "key": key,
            "payload": payload_text,
            "seal": self._seal(namespace, key, payload_text),
        }
        path = self._path(namespace, key)
        # An unwritable cache is an empty one: the next run computes what it would have read. The run still says so
        # once (take_unwritable_caches), or every run would pay a cold run's cost without knowing why.
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            _mark_ignored(self.directory)
            handle, temporary = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-", suffix=".json")
            try:
                with os.fdopen(handle, "wb") as stream:
                    stream.write(json.dumps(entry, separators=(",", ":")).encode("utf-8", "surrogatepass"))
                os.replace(temporary, path)
            except BaseException:
                _remove(temporary)
                raise
        except OSError as error:
            _unwritable.setdefault(self.directory, error.strerror or str(error))

    def prune(self, namespace: str, keep: int) -> None:
        """Remove the oldest entries of a namespace beyond the `keep` newest (by when they were written)."""
        entries = []
        try:
            with os.scandir(os.path.join(self.directory, namespace)) as shards:
                for shard in shards:
                    if shard.is_dir():
                        with os.scandir(shard.path) as files:
                            entries += [(item.stat().st_mtime_ns, item.path) for item in files if item.is_file()]
        except OSError:
            return
        for _, path in sorted(entries)[: max(len(entries) - keep, 0)]:
            _remove(path)


# Cache directories this process could not write to, with the first reason: the CLI warns of each once.
_unwritable: dict[str, str] = {}


def take_unwritable_caches() -> dict[str, str]:
    """Each cache directory a write failed in since the last call, with why (the first failure's reason); a
    process that runs again and again (the tests, --watch, the server) hears of each run's failures once."""
    taken = dict(_unwritable)
    _unwritable.clear()
    return taken


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def _mark_ignored(directory: str) -> None:
    """A `.gitignore` of `*` in the cache directory (as ruff writes), so no checkout ever commits it."""
    marker = os.path.join(directory, ".gitignore")
    if not os.path.exists(marker):
        try:
            with open(marker, "w", encoding="utf-8") as handle:
                handle.write("# Written by hexlint: the cache is local, never committed.\n*\n")
        except OSError:
            pass


def user_cache_home() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "hexlint")


def user_secret() -> bytes | None:
    """The secret entries are sealed with: made once per user (0600, outside any checkout); None when it can be
    neither read nor made, and then nothing is cached."""
    path = os.path.join(user_cache_home(), _SECRET_NAME)
    for _ in range(3):
        try:
            with open(path, "rb") as handle:
                secret = handle.read()
            if len(secret) >= 32:
                return secret
        except OSError:
            pass
        try:
            os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
            handle = os.open(path + f".{os.getpid()}", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(handle, "wb") as stream:
                stream.write(secrets.token_bytes(32))
            try:
                os.link(path + f".{os.getpid()}", path)  # the first process to make it wins; the others read it
            except FileExistsError:
                pass
            finally:
                _remove(path + f".{os.getpid()}")
        except OSError:
            return None
    return None


def open_store(directory: str) -> Store | None:
    secret = user_secret()
    return Store(directory, secret) if secret is not None else None


# ---------------------------------------------------------------- keys


def key_of(*parts: Any) -> str:
    """A digest of JSON-able parts (canonical JSON: the same parts give the same key in every process)."""
    text = json.dumps(parts, separators=(",", ":"), sort_keys=True, default=repr)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


_build_id: str | None = None


def build_id() -> str:
    """A digest of hexlint's own files (code, rule documents, SDK stand-ins) and libclang's library: a changed rule,
    even in a development checkout whose version number did not move, never reads an older run's entries. Files are
    known by name, size and mtime (an edit, a checkout or an install gives a new one), not content: reading them
    all would cost every run, warm ones too, more than the rest of a warm run's key."""
    global _build_id
    if _build_id is None:
        from hexlint import __version__

        digest = hashlib.sha256(f"{FORMAT}:{__version__}".encode())
        package = os.path.dirname(os.path.abspath(__file__))
        roots = [package, os.path.join(os.path.dirname(package), "rules")]
        for root in roots:
            for directory, subdirectories, files in os.walk(root):
                subdirectories[:] = sorted(name for name in subdirectories if name != "__pycache__")
                for name in sorted(files):
                    if name.endswith((".py", ".toml", ".h", ".idl")):
                        path = os.path.join(directory, name)
                        stat = os.stat(path)
                        place = f"{os.path.relpath(path, root)}\0{stat.st_size}\0{stat.st_mtime_ns}\0"
                        digest.update(place.encode("utf-8", "surrogatepass"))
        digest.update(_libclang_identity().encode())
        _build_id = digest.hexdigest()
    return _build_id


def _libclang_identity() -> str:
    """The libclang shared library's size and mtime: a different clang parses differently. Found without importing
    clang.cindex (a binary audit never loads it)."""
    import importlib.util

    spec = importlib.util.find_spec("clang")
    if spec is None or not spec.submodule_search_locations:
        return "no libclang"
    found = []
    for location in spec.submodule_search_locations:
        native = os.path.join(location, "native")
        for name in sorted(os.listdir(native)) if os.path.isdir(native) else ():
            stat = os.stat(os.path.join(native, name))
            found.append(f"{name}:{stat.st_size}:{stat.st_mtime_ns}")
    return ";".join(found)


class FileDigests:
    """Content digests of files, each read once per run; `overrides` gives text that stands for a file (stdin).
    Files under `stat_only_roots` (system and compiler headers) are known by size, mtime and inode: hashing a C++
    standard library on every run would cost more than the cache saves, and those change only with a package
    update. A `dir:PATH` stands for the directory's listing."""

    def __init__(self, overrides: Mapping[str, bytes] | None = None, stat_only_roots: Iterable[str] = ()) -> None:
        self._overrides = {os.path.realpath(path): data for path, data in (overrides or {}).items()}
        self._stat_only = tuple(os.path.join(os.path.realpath(root), "") for root in stat_only_roots)
        self._known: dict[str, str] = {}

    def of(self, path: str) -> str:
        found = self._known.get(path)
        if found is None:
            found = self._known[path] = self._digest(path)
        return found

    def _digest(self, path: str) -> str:
        if path.startswith("dir:"):
            try:
                listing = "\0".join(sorted(os.listdir(path[4:])))
            except OSError:
                return "missing"
            return hashlib.sha256(listing.encode("utf-8", "surrogateescape")).hexdigest()
        real = os.path.realpath(path)
        data = self._overrides.get(real)
        if data is not None:
            return hashlib.sha256(data).hexdigest()
        if real.startswith(self._stat_only):
            try:
                stat = os.stat(real)
            except OSError:
                return "missing"
            return f"stat:{stat.st_size}:{stat.st_mtime_ns}:{stat.st_ino}"
        data = read_bytes_or_none(real)
        return hashlib.sha256(data).hexdigest() if data is not None else "missing"


def dependencies_of(paths: Iterable[str], digests: FileDigests) -> list[list[str]]:
    return [[path, digests.of(path)] for path in dict.fromkeys(paths)]


def dependencies_hold(dependencies: Sequence[Sequence[str]], digests: FileDigests) -> bool:
    """Every recorded file still has the digest it had (a `dir:` entry: the same listing)."""
    return all(digests.of(path) == digest for path, digest in dependencies)


# ---------------------------------------------------------------- findings as data


def _span_data(span: Span | None) -> list[Any] | None:
    if span is None:
        return None
    return [span.path, span.line, span.column, span.end_line, span.end_column, span.symbol, span.address]


def _span_from(data: Sequence[Any] | None) -> Span | None:
    return None if data is None else Span(*data)


def diagnostic_data(diagnostic: Diagnostic) -> dict[str, Any]:
    fix = diagnostic.fix
    return {
        "code": diagnostic.code,
        "name": diagnostic.name,
        "severity": diagnostic.severity.value,
        "message": diagnostic.message,
        "span": _span_data(diagnostic.span),
        "source_span": _span_data(diagnostic.source_span),
        "related": [[_span_data(related.span), related.message] for related in diagnostic.related],
        "fix": None
        if fix is None
        else {
            "title": fix.title,
            "safe": fix.safe,
            # latin-1 maps every byte to one code point: replacements round-trip whatever their encoding.
            "edits": [[edit.path, edit.start, edit.end, edit.replacement.decode("latin-1")] for edit in fix.edits],
        },
        "fingerprint_text": diagnostic.fingerprint_text,
    }


def diagnostic_from(data: Mapping[str, Any]) -> Diagnostic:
    fix = data["fix"]
    return Diagnostic(
        code=data["code"],
        name=data["name"],
        severity=Severity(data["severity"]),
        message=data["message"],
        span=_span_from(data["span"]),  # type: ignore[arg-type]
        source_span=_span_from(data["source_span"]),
        related=tuple(Related(_span_from(span), message) for span, message in data["related"]),  # type: ignore[arg-type]
        fix=None
        if fix is None
        else Fix(
            fix["title"],
            tuple(Edit(path, start, end, text.encode("latin-1")) for path, start, end, text in fix["edits"]),
            fix["safe"],
        ),
        fingerprint_text=data["fingerprint_text"],
    )
