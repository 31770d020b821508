"""Vertex AI credentials checked before a run, without any network call.

On Vertex AI, genai asks ``google.auth.default()`` for credentials at the first
model call. With no credentials file, that probes the cloud metadata server
(169.254.169.254: 3 s x 3 tries off Google Cloud; on a cloud CI runner it answers,
and the runner's own project pays). `check_vertex` finds what ``default()`` would
use, in the same order, without calling it: the ``GOOGLE_APPLICATION_CREDENTIALS``
file, then gcloud's application-default credentials file (both only parsed),
then the metadata server, assumed only on a Google Cloud machine. The project
comes from ``GOOGLE_CLOUD_PROJECT`` (or ``GCLOUD_PROJECT``), the credentials
file, or gcloud's configuration read from its files. Nothing here opens a
socket or starts a process.

Whether a token can still be refreshed (an expired login) is only known by
asking Google, so it is not checked.
"""

from __future__ import annotations

import configparser
import os
import shutil
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "PRODUCT_NAME",
    "VertexCheck",
    "check_vertex",
    "gcloud_project",
    "on_google_cloud",
    "uses_vertex",
    "vertex_credentials_line",
    "vertex_setting",
]

PRODUCT_NAME = Path("/sys/class/dmi/id/product_name")
"""The machine's SMBIOS product name: ``Google Compute Engine`` on Google Cloud VMs."""

_SERVERLESS = ("K_SERVICE", "CLOUD_RUN_JOB", "GAE_ENV", "FUNCTION_TARGET")
_BACKEND_ENV = ("GOOGLE_GENAI_USE_ENTERPRISE", "GOOGLE_GENAI_USE_VERTEXAI")
_ADC_LOGIN = "gcloud application-default login"
_FIX = (
    "run `gcloud auth application-default login`, or set GOOGLE_APPLICATION_CREDENTIALS to "
    "a credentials file, or use an API key (GOOGLE_API_KEY) or a local model ('local')"
)


@dataclass(frozen=True)
class VertexCheck:
    """What Vertex AI would run with here, found without network.

    Attributes:
        ready: Whether credentials and a project were found.
        line: When ready, the project, where the credentials come from and the
            location; otherwise the problem and how to fix it.
    """

    ready: bool
    line: str


def vertex_setting() -> str | None:
    """The variable that puts Gemini on Vertex AI, or None (the Gemini API).

    genai's own precedence: ``GOOGLE_GENAI_USE_ENTERPRISE`` when it is set at
    all (even to false), else ``GOOGLE_GENAI_USE_VERTEXAI``; ``true`` or ``1``
    turns Vertex AI on.
    """
    for env in _BACKEND_ENV:
        value = os.environ.get(env)
        if value is not None:
            return env if value.lower() in ("true", "1") else None
    return None


def uses_vertex(model: str) -> bool:
    """Whether the Gemini model `model` runs on Vertex AI here.

    A ``projects/...`` name always does (ADK asks for Vertex AI for it);
    another name does when `vertex_setting` says so.
    """
    return model.startswith("projects/") or vertex_setting() is not None


def vertex_credentials_line() -> str | None:
    """``Vertex AI: project ..., credentials from ..., location ...``, when Vertex AI is on.

    None when Gemini runs on the Gemini API, or when `check_vertex` finds a
    problem (the model pre-flight reports it).
    """
    if vertex_setting() is None:
        return None
    check = check_vertex()
    return f"Vertex AI: {check.line}" if check.ready else None


def check_vertex() -> VertexCheck:
    """Finds, without network, the project and credentials Vertex AI would use.

    Returns:
        `VertexCheck`: ready with ``project P (from ...), credentials from ...,
        location L``, or not ready with one line naming the problem and the fix.
    """
    location = os.environ.get("GOOGLE_CLOUD_LOCATION") or None
    key_env = next((k for k in ("GOOGLE_API_KEY", "GEMINI_API_KEY") if os.environ.get(k)), None)
    if key_env and not os.environ.get("GOOGLE_CLOUD_PROJECT") and not location:
        # genai's express mode: the key is used when no project or location is set.
        return VertexCheck(True, f"API key from {key_env} (express mode, no project)")
    found = _credentials_file()
    if isinstance(found, VertexCheck):
        return found
    if found is None:
        return _metadata_server(location or "global")
    path, via = found
    return _from_file(path, via, location or "global")


def _env_project() -> tuple[str, str] | None:
    for env in ("GOOGLE_CLOUD_PROJECT", "GCLOUD_PROJECT"):
        value = os.environ.get(env)
        if value:
            return value, env
    return None


def _adc_path() -> str:
    from google.auth import _cloud_sdk

    return str(_cloud_sdk.get_application_default_credentials_path())  # type: ignore[no-untyped-call]


def _credentials_file() -> tuple[str, str] | VertexCheck | None:
    """The file ``google.auth.default()`` would read and how it was chosen (None: none)."""
    explicit = os.environ.get("GOOGLE_APPLICATION_CREDENTIALS")
    if explicit:
        if not os.path.isfile(explicit):
            return VertexCheck(
                False,
                f"GOOGLE_APPLICATION_CREDENTIALS names {explicit}, which does not exist: "
                "point it at a credentials file, or unset it to use "
                "`gcloud auth application-default login`",
            )
        return explicit, "GOOGLE_APPLICATION_CREDENTIALS"
    adc = _adc_path()
    return (adc, _ADC_LOGIN) if os.path.isfile(adc) else None


def on_google_cloud() -> bool:
    """Whether this is a Google Cloud machine, told without asking its metadata server."""
    if any(os.environ.get(env) for env in _SERVERLESS):
        return True
    try:
        return PRODUCT_NAME.read_text().startswith("Google")
    except OSError:
        return False


def _metadata_server(location: str) -> VertexCheck:
    if not on_google_cloud():
        return VertexCheck(
            False,
            "no credentials: GOOGLE_APPLICATION_CREDENTIALS is not set, there is no "
            f"{_adc_path()}, and this is not a Google Cloud machine (google-auth would ask its "
            f"metadata server, and wait for it to time out); {_FIX}",
        )
    where = "the metadata server of this Google Cloud machine (not asked yet)"
    env = _env_project()
    project = f"{env[0]} (from {env[1]})" if env else f"from {where}"
    return VertexCheck(True, f"project {project}, credentials from {where}, location {location}")


def _offline(*args: Any, **kwargs: Any) -> Any:
    """The request google-auth is handed: any attempt to reach a server is refused."""
    from google.auth import exceptions

    raise exceptions.TransportError(  # type: ignore[no-untyped-call]
        "adk_eval's Vertex AI check makes no network call"
    )


def _from_file(path: str, via: str, location: str) -> VertexCheck:
    import google.auth
    from google.auth import exceptions

    try:  # parses the file; a request is only made for a project google-auth must look up
        with warnings.catch_warnings():  # the generic loader's warning, silenced as default() does
            warnings.simplefilter("ignore", DeprecationWarning)
            credentials, file_project = google.auth.load_credentials_from_file(  # type: ignore[no-untyped-call]
                path, request=_offline
            )
    except (exceptions.GoogleAuthError, OSError, ValueError) as error:
        reason = "; ".join(str(arg) for arg in error.args) or type(error).__name__
        return VertexCheck(
            False, f"credentials file {path} ({via}) cannot be used: {reason}; {_FIX}"
        )
    principal = _principal(credentials)
    source = f"credentials from {path} ({via}{f', {principal}' if principal else ''})"
    project = _project(path, file_project)
    if isinstance(project, str):
        return VertexCheck(False, f"{source} but no project: {project}")
    return VertexCheck(
        True, f"project {project[0]} (from {project[1]}), {source}, location {location}"
    )


def _project(path: str, file_project: str | None) -> tuple[str, str] | str:
    """The project and where it comes from, else what to do."""
    env = _env_project()
    if env is not None:
        return env
    if file_project:
        return file_project, path
    fix = "set GOOGLE_CLOUD_PROJECT"
    if path != _adc_path():  # google-auth asks gcloud only for its own file
        return fix
    configured = gcloud_project()
    if configured is None:
        return f"{fix} (or `gcloud config set project ...`)"
    if shutil.which("gcloud") is None:  # google-auth runs gcloud to read it
        return f"{fix} (gcloud's configuration names {configured[0]}, but gcloud is not on PATH)"
    return configured


def gcloud_project() -> tuple[str, str] | None:
    """The project gcloud is configured with and where it is set, read from its files (not run)."""
    from google.auth import _cloud_sdk

    if os.environ.get("CLOUDSDK_CORE_PROJECT"):
        return os.environ["CLOUDSDK_CORE_PROJECT"], "CLOUDSDK_CORE_PROJECT"
    folder = Path(_cloud_sdk.get_config_path())  # type: ignore[no-untyped-call]
    name = os.environ.get("CLOUDSDK_ACTIVE_CONFIG_NAME")
    if not name:
        try:
            name = (folder / "active_config").read_text().strip() or "default"
        except OSError:
            name = "default"
    config = configparser.ConfigParser()
    try:
        config.read(folder / "configurations" / f"config_{name}")
    except configparser.Error:
        return None
    project = config.get("core", "project", fallback="").strip()
    return (project, f"gcloud configuration `{name}`") if project else None


def _principal(credentials: Any) -> str | None:
    """Whose credentials these are (an account or a service account's email), if known."""
    info = credentials.get_cred_info() if hasattr(credentials, "get_cred_info") else None
    for value in (
        (info or {}).get("principal"),
        getattr(credentials, "account", None),
        getattr(credentials, "service_account_email", None),
    ):
        if isinstance(value, str) and value:
            return value
    return None
