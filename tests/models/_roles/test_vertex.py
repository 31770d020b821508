"""Vertex AI credentials are checked before a run from real files, and nothing reaches a network.

Every test runs with a scratch HOME and gcloud folder, every Google variable
cleared, and sockets, name lookups, processes and ``google.auth.default`` made to
raise: the check must answer from files and variables alone.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
from pathlib import Path

import google.auth
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from adk_eval._agent_tree import check_model
from adk_eval._errors import EvalSetupError
from adk_eval.models import missing_credentials, provider_statuses, resolve_model
from adk_eval.models._roles import _vertex
from adk_eval.models._roles._vertex import check_vertex, vertex_credentials_line

USER = {
    "type": "authorized_user",
    "client_id": "x",
    "client_secret": "y",
    "refresh_token": "z",
    "account": "someone@example.com",
}
FIX = (
    "run `gcloud auth application-default login`, or set GOOGLE_APPLICATION_CREDENTIALS to "
    "a credentials file, or use an API key (GOOGLE_API_KEY) or a local model ('local')"
)


class NetworkUsed(AssertionError):
    pass


def refuse(*args, **kwargs):
    raise NetworkUsed(f"the check reached outside: {args!r}")


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    """No socket connects, no name is looked up, no process starts, default() is never asked."""
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(subprocess, "Popen", refuse)
    monkeypatch.setattr(google.auth, "default", refuse)


@pytest.fixture(autouse=True)
def scratch(monkeypatch, tmp_path) -> Path:
    """A machine with nothing configured: scratch HOME and gcloud folder, a fake gcloud on PATH."""
    for key in list(os.environ):
        if key.startswith(("GOOGLE_", "CLOUDSDK_", "GCLOUD_", "GEMINI_")) or key in (
            "K_SERVICE",
            "CLOUD_RUN_JOB",
            "GAE_ENV",
            "FUNCTION_TARGET",
        ):
            monkeypatch.delenv(key)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    gcloud = tmp_path / "gcloud"
    gcloud.mkdir()
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(gcloud))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "gcloud"  # found on PATH, never run (processes raise)
    fake.write_text("#!/bin/sh\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setattr(_vertex, "PRODUCT_NAME", tmp_path / "no-dmi" / "product_name")
    return gcloud


@pytest.fixture
def vertex(monkeypatch):
    monkeypatch.setenv("GOOGLE_GENAI_USE_VERTEXAI", "true")


def write(path: Path, data: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def gcloud_config(folder: Path, name: str, project: str) -> None:
    (folder / "active_config").write_text(name + "\n")
    config = folder / "configurations" / f"config_{name}"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f"[core]\nproject = {project}\naccount = someone@example.com\n")


def service_account(path: Path) -> Path:
    """A service-account file with a key made here for the test (it signs nothing)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    return write(
        path,
        {
            "type": "service_account",
            "project_id": "sa-proj",
            "private_key_id": "k1",
            "private_key": pem,
            "client_email": "bot@sa-proj.iam.gserviceaccount.com",
            "client_id": "1",
            "token_uri": "https://oauth2.googleapis.com/token",
        },
    )


def test_the_guards_refuse_the_network():
    with pytest.raises(NetworkUsed):
        socket.create_connection(("169.254.169.254", 80), timeout=0.1)
    with pytest.raises(NetworkUsed):
        google.auth.default()


@pytest.mark.usefixtures("vertex")
def test_the_gcloud_login_and_configuration_give_credentials_and_project(scratch):
    adc = write(scratch / "application_default_credentials.json", USER)
    gcloud_config(scratch, "work", "my-proj")
    line = (
        "Vertex AI: project my-proj (from gcloud configuration `work`), credentials from "
        f"{adc} (gcloud application-default login, someone@example.com), location global"
    )
    assert vertex_credentials_line() == line
    assert missing_credentials("gemini-2.5-flash") is None
    assert provider_statuses()[0].configured


@pytest.mark.usefixtures("vertex")
def test_the_project_variable_wins_and_the_location_is_read(scratch, monkeypatch):
    adc = write(scratch / "application_default_credentials.json", USER)
    gcloud_config(scratch, "default", "config-proj")
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "env-proj")
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "europe-west4")
    assert vertex_credentials_line() == (
        "Vertex AI: project env-proj (from GOOGLE_CLOUD_PROJECT), credentials from "
        f"{adc} (gcloud application-default login, someone@example.com), location europe-west4"
    )


@pytest.mark.usefixtures("vertex")
def test_a_service_account_file_gives_its_project_and_email(tmp_path, monkeypatch):
    key = service_account(tmp_path / "sa.json")
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(key))
    assert vertex_credentials_line() == (
        f"Vertex AI: project sa-proj (from {key}), credentials from {key} "
        "(GOOGLE_APPLICATION_CREDENTIALS, bot@sa-proj.iam.gserviceaccount.com), location global"
    )


@pytest.mark.usefixtures("vertex")
def test_credentials_without_a_project_fail_the_pre_flight(tmp_path, scratch, monkeypatch):
    gcloud_config(scratch, "default", "config-proj")  # gcloud's project is not read for this file
    user = write(tmp_path / "user.json", {**USER, "quota_project_id": "quota-only"})
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(user))
    problem = (
        f"credentials from {user} (GOOGLE_APPLICATION_CREDENTIALS, someone@example.com) "
        "but no project: set GOOGLE_CLOUD_PROJECT"
    )
    assert check_vertex() == _vertex.VertexCheck(False, problem)
    assert vertex_credentials_line() is None
    expected = (
        f"model 'gemini-2.5-flash' runs on Vertex AI (GOOGLE_GENAI_USE_VERTEXAI is on): {problem}"
    )
    assert missing_credentials("gemini-2.5-flash") == expected
    with pytest.raises(EvalSetupError) as raised:
        resolve_model("gemini-2.5-flash")
    assert str(raised.value) == expected
    status = provider_statuses()[0]
    assert not status.configured
    assert status.detail == f"Vertex AI (GOOGLE_GENAI_USE_VERTEXAI): {problem}"


@pytest.mark.usefixtures("vertex")
def test_an_agent_on_vertex_without_credentials_is_stopped_before_it_runs(monkeypatch):
    from google.adk.agents import LlmAgent

    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", "/nope.json")
    agent = LlmAgent(name="helper", model="gemini-2.5-flash")
    with pytest.raises(EvalSetupError, match=r"/nope.json, which does not exist"):
        check_model(agent, case="greets")


@pytest.mark.usefixtures("vertex")
def test_a_gcloud_login_with_no_project_anywhere(scratch):
    adc = write(scratch / "application_default_credentials.json", USER)
    assert check_vertex().line == (
        f"credentials from {adc} (gcloud application-default login, someone@example.com) but "
        "no project: set GOOGLE_CLOUD_PROJECT (or `gcloud config set project ...`)"
    )


@pytest.mark.usefixtures("vertex")
def test_gcloud_configuration_needs_gcloud_on_path_for_google_auth(scratch, tmp_path, monkeypatch):
    write(scratch / "application_default_credentials.json", USER)
    gcloud_config(scratch, "default", "config-proj")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    check = check_vertex()
    assert not check.ready
    assert check.line.endswith(
        "no project: set GOOGLE_CLOUD_PROJECT (gcloud's configuration names config-proj, "
        "but gcloud is not on PATH)"
    )


@pytest.mark.usefixtures("vertex")
def test_a_missing_or_broken_credentials_file_is_named(tmp_path, monkeypatch):
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", "/nope.json")
    assert check_vertex().line == (
        "GOOGLE_APPLICATION_CREDENTIALS names /nope.json, which does not exist: point it at a "
        "credentials file, or unset it to use `gcloud auth application-default login`"
    )
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(broken))
    line = check_vertex().line
    assert line.startswith(
        f"credentials file {broken} (GOOGLE_APPLICATION_CREDENTIALS) cannot be used: "
        f"File {broken} is not a valid json file."
    )
    assert line.endswith(FIX)
    write(broken, {"type": "service_account", "project_id": "p", "private_key": "not a key"})
    assert "cannot be used: Failed to load service account credentials" in check_vertex().line


@pytest.mark.usefixtures("vertex")
def test_no_file_off_google_cloud_is_refused_without_asking_the_metadata_server(scratch):
    problem = (
        "no credentials: GOOGLE_APPLICATION_CREDENTIALS is not set, there is no "
        f"{scratch / 'application_default_credentials.json'}, and this is not a Google Cloud "
        f"machine (google-auth would ask its metadata server, and wait for it to time out); {FIX}"
    )
    assert check_vertex() == _vertex.VertexCheck(False, problem)
    assert missing_credentials("gemini-2.5-flash") == (
        f"model 'gemini-2.5-flash' runs on Vertex AI (GOOGLE_GENAI_USE_VERTEXAI is on): {problem}"
    )


@pytest.mark.usefixtures("vertex")
def test_on_google_cloud_the_metadata_server_is_assumed_not_asked(tmp_path, monkeypatch):
    metadata = "the metadata server of this Google Cloud machine (not asked yet)"
    monkeypatch.setenv("K_SERVICE", "my-service")  # Cloud Run
    assert vertex_credentials_line() == (
        f"Vertex AI: project from {metadata}, credentials from {metadata}, location global"
    )
    monkeypatch.delenv("K_SERVICE")
    assert not check_vertex().ready
    product = tmp_path / "dmi" / "product_name"
    product.parent.mkdir()
    product.write_text("Google Compute Engine\n")
    monkeypatch.setattr(_vertex, "PRODUCT_NAME", product)
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "vm-proj")
    assert vertex_credentials_line() == (
        f"Vertex AI: project vm-proj (from GOOGLE_CLOUD_PROJECT), credentials from {metadata}, "
        "location global"
    )


def test_the_enterprise_variable_decides_first_as_in_genai(monkeypatch):
    monkeypatch.setenv("GOOGLE_GENAI_USE_VERTEXAI", "true")
    monkeypatch.setenv("GOOGLE_GENAI_USE_ENTERPRISE", "false")  # genai: this one wins
    assert vertex_credentials_line() is None
    assert "needs a Gemini API key" in missing_credentials("gemini-2.5-flash")
    monkeypatch.setenv("GOOGLE_GENAI_USE_ENTERPRISE", "1")
    monkeypatch.delenv("GOOGLE_GENAI_USE_VERTEXAI")
    assert "runs on Vertex AI (GOOGLE_GENAI_USE_ENTERPRISE is on): no credentials" in (
        missing_credentials("gemini-2.5-flash")
    )
    monkeypatch.delenv("GOOGLE_GENAI_USE_ENTERPRISE")
    assert "runs on Vertex AI (a projects/ name): no credentials" in missing_credentials(
        "projects/p/locations/us-central1/publishers/google/models/gemini-2.5-flash"
    )


@pytest.mark.usefixtures("vertex")
def test_an_api_key_alone_is_vertex_express_mode(scratch, monkeypatch):
    monkeypatch.setenv("GOOGLE_API_KEY", "k")
    assert vertex_credentials_line() == (
        "Vertex AI: API key from GOOGLE_API_KEY (express mode, no project)"
    )
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "p")  # genai then drops the key for credentials
    assert check_vertex().line.startswith("no credentials: ")
    adc = write(scratch / "application_default_credentials.json", USER)
    assert vertex_credentials_line() == (
        f"Vertex AI: project p (from GOOGLE_CLOUD_PROJECT), credentials from {adc} "
        "(gcloud application-default login, someone@example.com), location global"
    )


@pytest.mark.usefixtures("vertex")
def test_a_ready_gemini_model_is_built_without_reaching_the_network(scratch, monkeypatch):
    write(scratch / "application_default_credentials.json", USER)
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "my-proj")
    model = resolve_model("gemini-2.5-flash")
    client = model.api_client  # type: ignore[attr-defined]
    assert client.vertexai
    assert client._api_client.project == "my-proj"
