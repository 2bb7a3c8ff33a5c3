"""A PEP 503 package index on 127.0.0.1, made by a test: sdists whose setup.py leaves a marker file where it runs.

`PackageIndex` serves `/simple/<name>/` pages (PEP 691 JSON to a client that takes only that) and
`/files/<file>`; `add_sdist` makes a setup.py-only sdist of a one-module distribution. Its setup.py
writes `marker` (an absolute path) before calling setup(), so the file exists on the host exactly when
the package's code ran on the host.
"""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import threading
import uuid
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from packaging.utils import canonicalize_name


class PackageIndex:
    """Files by name, and the hash each page lists (`listed`: a wrong one makes a lying index)."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.listed: dict[str, str] = {}  # file name -> the sha256 the page shows
        self.projects: dict[str, list[str]] = {}
        self.uploaded: dict[str, str] = {}  # file name -> the PEP 700 upload-time its JSON page gives
        self.url = ""

    def add_sdist(self, name: str, version: str, marker: Path, *, body: str = "", value: int = 42,
                  setup_args: str = "") -> str:
        """An sdist of `name` with module `<name with _>` (VALUE = value); its setup.py writes `marker`, then
        runs `body` (python, e.g. a sleep or a raise), then setup() with `setup_args` too (e.g. `setup_requires=
        ['x']`). Returns the module name."""
        module = name.replace("-", "_")
        setup = (f"import os\nos.makedirs({str(marker.parent)!r}, exist_ok=True)\n"
                 f"open({str(marker)!r}, 'w').write('setup.py ran here')\n{body}\n"
                 f"from setuptools import setup\nsetup(name={name!r}, version={version!r}, py_modules=[{module!r}]"
                 f"{', ' + setup_args if setup_args else ''})\n")
        top = f"{module}-{version}"
        members = {f"{top}/setup.py": setup, f"{top}/{module}.py": f"VALUE = {value}\n",
                   f"{top}/PKG-INFO": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"}
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz") as tar:
            for path, text in members.items():
                data = text.encode()
                info = tarfile.TarInfo(path)
                info.size, info.mode = len(data), 0o644
                tar.addfile(info, io.BytesIO(data))
        filename = f"{top}.tar.gz"
        self.add_file(name, filename, buf.getvalue())
        return module

    def add_wheel(self, name: str, version: str, *, value: int = 42, module: str = "", body: str = "",
                  tag: str = "py3-none-any", entry_points: str = "") -> str:
        """A wheel of `name` with module `module` (default `<name with _>`; VALUE = value, after `body`, python
        run on import, e.g. a raise), pure python unless `tag` says a platform (a made-up compiled release:
        its code is still python; `entry_points`: its entry_points.txt, e.g. a pytest11 plugin); returns the
        module name."""
        module = module or name.replace("-", "_")
        info = f"{name.replace('-', '_')}-{version}.dist-info"
        files = {f"{module}.py": f"{body}\nVALUE = {value}\n",
                 f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
                 f"{info}/WHEEL": f"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: {tag}\n",
                 f"{info}/top_level.txt": f"{module}\n"}
        if entry_points:
            files[f"{info}/entry_points.txt"] = entry_points
        files[f"{info}/RECORD"] = "".join(f"{path},,\n" for path in files) + f"{info}/RECORD,,\n"
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as zf:
            for path, text in files.items():
                zf.writestr(path, text)
        self.add_file(name, f"{name.replace('-', '_')}-{version}-{tag}.whl", buf.getvalue())
        return module

    def add_file(self, name: str, filename: str, data: bytes) -> None:
        self.files[filename] = data
        self.listed[filename] = hashlib.sha256(data).hexdigest()
        self.projects.setdefault(str(canonicalize_name(name)), []).append(filename)

    def page(self, project: str, json_api: bool = False) -> bytes | None:
        """The project's PEP 503 page, or its PEP 691 JSON form (asked by `Accept`, as pip_index.wheel_versions does)."""
        names = self.projects.get(project)
        if names is None:
            return None
        if json_api:
            files = [{"filename": n, "url": f"/files/{n}", "hashes": {"sha256": self.listed[n]},
                      **({"upload-time": self.uploaded[n]} if n in self.uploaded else {})} for n in names]
            return json.dumps({"meta": {"api-version": "1.0"}, "name": project, "files": files}).encode()
        links = "".join(f'<a href="/files/{n}#sha256={self.listed[n]}">{n}</a>\n' for n in names)
        return f"<!DOCTYPE html><html><body>\n{links}</body></html>\n".encode()


@contextmanager
def serve(index: PackageIndex) -> Iterator[PackageIndex]:
    """The index on 127.0.0.1 (its `url` ends in /simple) for the block's duration."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            parts = [p for p in self.path.split("?")[0].split("/") if p]
            body, json_api = None, False
            if len(parts) == 2 and parts[0] == "simple":
                accept = self.headers.get("Accept", "")  # pip takes HTML too: it gets the page it always got
                json_api = "json" in accept and "html" not in accept
                body = index.page(parts[1], json_api)
            elif len(parts) == 2 and parts[0] == "files":
                body = index.files.get(parts[1])
            if body is None:
                self.send_error(404)
                return
            self.send_response(200)
            kind = "application/vnd.pypi.simple.v1+json" if parts[0] == "simple" and json_api else \
                "text/html" if parts[0] == "simple" else "application/octet-stream"
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    index.url = f"http://127.0.0.1:{server.server_address[1]}/simple"
    try:
        yield index
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def unique_name() -> str:
    return f"glmarker-{uuid.uuid4().hex[:8]}"


@contextmanager
def extra_index(monkeypatch: pytest.MonkeyPatch) -> Iterator[PackageIndex]:
    """A new index, served, as pip's extra index for the block (PyPI stays the main one: setuptools and
    wheel come from there)."""
    with serve(PackageIndex()) as served:
        monkeypatch.setenv("PIP_EXTRA_INDEX_URL", served.url)
        monkeypatch.setenv("PIP_FIND_LINKS", "")
        yield served
