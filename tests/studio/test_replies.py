"""The studio's answers as its response models send them, and no generated API docs."""

from __future__ import annotations

import httpx

from .conftest import TOKEN, agent_targets, clinic_case, running_server


def test_the_targets_list_each_key_the_page_reads(tmp_path):
    targets = [clinic_case(tmp_path), *agent_targets(tmp_path)]
    with (
        running_server(targets, tmp_path / "studio.db") as url,
        httpx.Client(base_url=url, headers={"X-Studio-Token": TOKEN}) as client,
    ):
        case, agent, _ = client.get("/api/targets").json()
    keys = ["name", "kind", "description", "agent", "roles", "eval_set_path", "first_message"]
    assert list(case) == list(agent) == keys
    assert case["kind"] == "case"
    assert case["roles"] == ["model", "loop_user", "tool_user:ask"]
    assert case["first_message"] == "I feel unwell"
    assert case["eval_set_path"] == str(tmp_path / "clinic.evalset.json")
    assert agent["kind"] == "agent"
    assert agent["roles"] == ["model"]
    assert agent["first_message"] is None


def test_the_models_generate_no_api_docs_to_serve(tmp_path):
    with (
        running_server(agent_targets(tmp_path), tmp_path / "studio.db") as url,
        httpx.Client(base_url=url, headers={"X-Studio-Token": TOKEN}) as client,
    ):
        for path in ["/openapi.json", "/docs", "/redoc"]:
            assert client.get(path).json() == {"error": f"no such page: {path}"}, path
