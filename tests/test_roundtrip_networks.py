"""network.json -> documents -> network.json on every shared real network (issue 2, point 7)."""

from __future__ import annotations

import json

import pytest

from .conftest import network_files

NETWORKS = network_files()


def _without_volatile_meta(data: dict) -> dict:
    data = dict(data)
    meta = data.get("meta")
    if isinstance(meta, dict):
        data["meta"] = {k: v for k, v in meta.items() if k not in ("updated_at", "generator")}
    return data


@pytest.mark.parametrize("network_path", NETWORKS, indirect=True)
def test_import_then_export_gives_the_same_network(network_path, tmp_path, cli):
    docs, exported = tmp_path / "beliefs", tmp_path / "out.json"
    assert cli("import", network_path, "-o", docs)[0] == 0
    code, _, err = cli("check", docs)
    assert code == 0, err
    assert cli("export", docs, "-o", exported)[0] == 0
    original = json.loads(network_path.read_text(encoding="utf-8"))
    again = json.loads(exported.read_text(encoding="utf-8"))
    assert _without_volatile_meta(again) == _without_volatile_meta(original)
    assert again["meta"]["generator"].startswith("belief-site/")
    # Byte for byte too, once the two volatile meta lines are set equal.
    again["meta"].update({k: original["meta"][k] for k in ("updated_at", "generator")})
    assert json.dumps(again, indent=2) == network_path.read_text(encoding="utf-8")


@pytest.mark.parametrize("network_path", NETWORKS, indirect=True)
def test_imported_documents_are_already_formatted(network_path, tmp_path, cli):
    docs = tmp_path / "beliefs"
    cli("import", network_path, "-o", docs)
    code, out, _ = cli("fmt", "--check", docs)
    assert code == 0, out


def test_import_never_overwrites_without_force(shared, tmp_path, cli):
    source = shared / "networks" / "eem-expert.json"
    docs = tmp_path / "beliefs"
    assert cli("import", source, "-o", docs)[0] == 0
    victim = docs / "agm-belief-revision.md"
    victim.write_text("# my own edits\n", encoding="utf-8")
    code, _, err = cli("import", source, "-o", docs)
    assert code == 1 and "E801" in err and "--force" in err
    assert victim.read_text(encoding="utf-8") == "# my own edits\n"
    assert cli("import", source, "-o", docs, "--force")[0] == 0
    assert victim.read_text(encoding="utf-8").startswith("---\nmetadata:") or \
        victim.read_text(encoding="utf-8").startswith("# agm-belief-revision")


def test_summaries_travel_beside_network_json(tmp_path, cli):
    """network.json has no summary field: export dropped every Summary section without a
    word, so documents -> network.json -> documents lost them (found by an exports audit).
    Now they go to belief-summaries.json beside it (spec §2.3) and import reads them back."""
    from .conftest import EXAMPLE
    exported = tmp_path / "out" / "network.json"
    exported.parent.mkdir()
    code, _, err = cli("export", EXAMPLE, "-o", exported)
    assert code == 0 and f"and 5 summaries to {exported.parent / 'belief-summaries.json'}" in err, err
    summaries = json.loads((exported.parent / "belief-summaries.json").read_text(encoding="utf-8"))
    assert "summary" not in json.dumps(json.loads(exported.read_text(encoding="utf-8"))["nodes"])
    docs = tmp_path / "docs"
    code, _, err = cli("import", exported, "-o", docs)
    assert code == 0 and "(with 5 summaries from" in err, err
    from site_builder.pipeline import check
    before, after = check(EXAMPLE).parsed.network.beliefs, check(docs).parsed.network.beliefs
    assert {i: b.summary for i, b in after.items()} == {i: b.summary for i, b in before.items()} == summaries
    code, out, err = cli("export", EXAMPLE, "-o", "-")
    assert code == 0 and "5 summaries left out: network.json has no summary field" in err
    # A sidecar that is wrong stops the import; an id it names that the network lacks is a warning.
    (exported.parent / "belief-summaries.json").write_text('{"nope": "x", "' + SEED_ID + '": "Kept."}')
    code, _, err = cli("import", exported, "-o", tmp_path / "docs2")
    assert code == 0 and "W604 'nope' is not a belief of the network" in err, err
    assert "Kept." in (tmp_path / "docs2" / f"{SEED_ID}.md").read_text(encoding="utf-8")
    (exported.parent / "belief-summaries.json").write_text('["not", "an", "object"]')
    code, _, err = cli("import", exported, "-o", tmp_path / "docs3")
    assert code == 1 and "belief-summaries.json:1: E602 must be an object of belief id -> summary text" in err
    assert not (tmp_path / "docs3").exists()


SEED_ID = "attention-is-non-symmetric"


def test_pins_travel_as_retracted_true(tmp_path, cli):
    network = {"nodes": {
        "a": {"text": "A.", "truth_value": "IN", "justifications": []},
        "c": {"text": "C.", "truth_value": "OUT",
              "justifications": [{"type": "SL", "antecedents": ["a"], "outlist": [], "label": ""}]},
    }, "nogoods": [], "repos": {}}
    source = tmp_path / "network.json"
    source.write_text(json.dumps(network), encoding="utf-8")
    docs = tmp_path / "docs"
    cli("import", source, "-o", docs)
    assert (docs / "c.md").read_text(encoding="utf-8").startswith("---\nretracted: true\n---\n")
    code, _, err = cli("check", docs)
    assert code == 0 and "W502" not in err  # the pin is explicit in documents
    out = tmp_path / "again.json"
    cli("export", docs, "-o", out)
    assert json.loads(out.read_text())["nodes"]["c"]["truth_value"] == "OUT"


@pytest.mark.parametrize("nodes, fields, own", [
    # Nodes left out with E602 have no say in the project's field set.
    ({"a": {"text": "a"}, "Bad": {"text": "y", "truth_value": "IN"}, "x1": {"text": "x", "truth_value": "MAYBE"}},
     ("text",), {"a": None}),
    # A tie goes to the first belief by id, whatever the order of the file.
    ({"b": {"text": "b", "truth_value": "IN"}, "a": {"text": "a"}}, ("text",), {"a": None, "b": ("text", "truth_value")}),
    ({"a": {"text": "a"}, "b": {"text": "b", "truth_value": "IN"}}, ("text",), {"a": None, "b": ("text", "truth_value")}),
])
def test_the_project_field_set_comes_from_valid_nodes_in_id_order(tmp_path, nodes, fields, own):
    from site_builder.pipeline import check
    path = tmp_path / "network.json"
    path.write_text(json.dumps({"nodes": nodes}), encoding="utf-8")
    network = check(path).parsed.network
    assert network.node_fields == fields
    assert {i: b.json_fields for i, b in network.beliefs.items()} == own


def test_export_says_which_beliefs_read_back_otherwise(tmp_path, cli):
    """Found by a data-loss audit: a document's tag on a belief outside the network is the
    value assumed of it (W401), which network.json has no field for; export said nothing,
    and read back (import, ftl-reasons) the seed went from IN to OUT."""
    from .conftest import EXAMPLE, SEED
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / f"{SEED}.md").write_bytes((EXAMPLE / f"{SEED}.md").read_bytes())  # its antecedents, tagged IN, not there
    exported = tmp_path / "network.json"
    code, _, err = cli("export", docs, "-o", exported)
    assert code == 0 and "W401" in err
    assert f"read back, 1 belief would be computed otherwise: {SEED} IN -> OUT" in err, err
    assert json.loads(exported.read_text(encoding="utf-8"))["nodes"][SEED]["truth_value"] == "IN"
    assert cli("import", exported, "-o", tmp_path / "again")[0] == 0
    code, _, err = cli("export", tmp_path / "again", "-o", tmp_path / "again.json")
    assert code == 0 and json.loads((tmp_path / "again.json").read_text(encoding="utf-8"))["nodes"][SEED]["truth_value"] == "OUT"
    assert "would be computed otherwise" not in err  # said once, where the assumption went
    code, _, err = cli("export", EXAMPLE, "-o", tmp_path / "whole.json")  # every antecedent there
    assert code == 0 and "would be computed otherwise" not in err
    # OUT only because a belief outside is assumed IN in its Unless list: read back, the
    # stored OUT of a justification that holds is a pin (W502), so it stays OUT (a review)
    blocked = tmp_path / "blocked"
    blocked.mkdir()
    (blocked / "a.md").write_text("# a\n\n**IN** · premise\n\nClaim a.\n", encoding="utf-8")
    (blocked / "b.md").write_text("# b\n\n**OUT** · derived\n\nClaim b.\n\n## Justifications\n\n### SL — x\n\n"
                                  "Antecedents (all must be IN):\n\n- IN a\n\nUnless (all must be OUT):\n\n- IN outside\n",
                                  encoding="utf-8")
    code, _, err = cli("export", blocked, "-o", tmp_path / "blocked.json")
    assert code == 0 and "W401" in err and "would be computed otherwise" not in err, err
    code, _, err = cli("check", tmp_path / "blocked.json")
    assert code == 0 and "W502 'b' is stored OUT" in err
