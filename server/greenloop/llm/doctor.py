"""`greenloop doctor` rows for the model side: which endpoint and why, which model, and whether it answers.

The endpoint row names the model source (llm.base_url, OPENAI_BASE_URL, a discovered local
server, the embedded server, or none) and why it won; a "local servers" row lists what
discovery found at each of `local_model.discover_urls`.
"""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

from greenloop.errors import GreenloopError
from greenloop.llm.endpoint import NO_ENDPOINT, Endpoint, find_endpoint, open_llm
from greenloop.llm.local_binary import choose_server, llama_cpp_python_installed
from greenloop.llm.local_model import ready_model, user_model_problem
from greenloop.settings import Settings
from greenloop_sandbox.doctor import Check

PROBE_TIMEOUT = 120.0  # seconds for the "does it answer" call (CPU models are slow)


def checks(settings: Settings) -> list[Check]:
    """Endpoint, model, and a tiny real completion. Blocking; safe to call inside an event loop."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, _checks(settings)).result()


async def _checks(settings: Settings) -> list[Check]:
    endpoint = await find_endpoint(settings)
    rows = [_endpoint_row(endpoint, settings)]
    if endpoint.probes:
        rows.append(_probes_row(endpoint))
    if endpoint.source == "none":
        return rows
    if endpoint.base_url is None:
        rows += _embedded_rows(settings)
    else:
        model = endpoint.model or settings.llm.model
        rows.append(await _listed_model_row(endpoint.base_url, endpoint.api_key, model))
    if all(r.ok for r in rows):
        rows.append(await _answer_row(settings))
    return rows


def _endpoint_row(endpoint: Endpoint, settings: Settings) -> Check:
    if endpoint.source == "none":
        return Check("model endpoint", False, "none configured, no local server found, embedded model off",
                     NO_ENDPOINT)
    if endpoint.base_url is None:
        why = "no endpoint configured"
        if endpoint.probes:
            why += ", no local server found"
        elif not settings.local_model.discover:
            why += ", local_model.discover is off"
        return Check("model endpoint", True, f"embedded model server on 127.0.0.1, started per run ({why})")
    if endpoint.discovered:
        return Check("model endpoint", True, f"{endpoint.source}, model {endpoint.model!r} (no endpoint "
                     f"configured, so local_model.discover_urls were probed; model: {endpoint.why})")
    key = "API key set" if endpoint.api_key else "no API key"
    return Check("model endpoint", True, f"{endpoint.base_url} (from {endpoint.source}; {key})")


def _probes_row(endpoint: Endpoint) -> Check:
    """What each discover URL answered; informational (nothing found is not a failure)."""
    return Check("local servers", True, "; ".join(p.describe() for p in endpoint.probes))


def _embedded_rows(settings: Settings) -> list[Check]:
    rows = [_server_row(settings)]
    if settings.local_model.model_file:
        rows.append(_user_file_row(settings.local_model.model_file))
        return rows
    path = ready_model(settings.local_model)
    if path is None:
        rows.append(Check("model file", False, f"Qwen2.5-Coder {settings.local_model.size} not fetched yet",
                          "greenloop model fetch"))
    else:
        size_mb = path.stat().st_size / 1e6
        rows.append(Check("model file", True, f"embedded model: {path} (Qwen2.5-Coder "
                          f"{settings.local_model.size}, fetched, {size_mb:.0f} MB, sha256 verified)"))
    return rows


def _user_file_row(model_file: str) -> Check:
    """`local_model.model_file`: there, a file, and readable; its content is the user's business."""
    path = Path(model_file).expanduser()
    problem = user_model_problem(path)
    if problem:
        return Check("model file", False, problem,
                     "fix local_model.model_file, or unset it to use the fetched Qwen2.5-Coder (greenloop model fetch)")
    size_mb = path.stat().st_size / 1e6
    return Check("model file", True, f"embedded model: {path} (from local_model.model_file, {size_mb:.0f} MB)")


def _server_row(settings: Settings) -> Check:
    """Which server the embedded model runs on, and why; the fallback is a pass with a hint."""
    try:
        choice = choose_server(settings.local_model)
    except GreenloopError as exc:
        return Check("model server", False, str(exc), "fix local_model.server_path, or run `greenloop model fetch`")
    if choice.kind == "llama-server":
        return Check("model server", True, f"llama-server ({choice.reason})")
    if choice.kind == "xllamacpp":
        return Check("model server", True, f"llama.cpp's server from xllamacpp ({choice.reason})")
    if not llama_cpp_python_installed():
        return Check("model server", False, f"no model server ({choice.reason})",
                     "pip install 'greenloop[local]' (xllamacpp, prebuilt), or greenloop model fetch (builds "
                     "llama-server)")
    return Check("model server", True, f"llama-cpp-python's server, about half as fast ({choice.reason})")


async def _listed_model_row(base_url: str, api_key: str | None, model: str) -> Check:
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        async with httpx.AsyncClient(timeout=10.0) as http:
            response = await http.get(f"{base_url.rstrip('/')}/models", headers=headers)
    except httpx.HTTPError as exc:
        return Check("model", False, f"cannot reach {base_url} ({type(exc).__name__}: {exc})",
                     "start the model server, or fix llm.base_url / OPENAI_BASE_URL")
    if response.status_code in (401, 403):
        return Check("model", False, f"{base_url} refused the API key (HTTP {response.status_code})",
                     "set OPENAI_API_KEY or llm.api_key")
    if response.status_code != 200:
        return Check("model", True, f"{model!r} (the server does not list models: HTTP {response.status_code})")
    try:
        names = [str(m.get("id")) for m in response.json().get("data", [])]
    except (ValueError, AttributeError):
        names = []
    if names and model not in names:
        return Check("model", False, f"{model!r} is not among the server's models: {', '.join(names[:10])}",
                     "set llm.model (or --model) to one of them")
    return Check("model", True, f"{model!r} is served")


async def _answer_row(settings: Settings) -> Check:
    llm = settings.llm.model_copy(update={"max_retries": 0, "timeout": min(settings.llm.timeout, PROBE_TIMEOUT)})
    probe = settings.model_copy(update={"llm": llm})
    started = time.perf_counter()
    try:
        async with open_llm(probe) as client:
            reply = await client.complete([{"role": "user", "content": "Reply with the word OK."}],
                                          step="doctor", max_tokens=4)
    except GreenloopError as exc:
        return Check("model answers", False, str(exc), "see the message; `greenloop model serve` shows the log")
    seconds = time.perf_counter() - started
    return Check("model answers", True, f"replied {reply.strip()[:20]!r} in {seconds:.1f}s")
