"""`belief-site fmt`: only derived content that is present is rewritten; idempotent."""

from __future__ import annotations

import shutil
from pathlib import Path

from .conftest import EXAMPLE, SEED

PREMISE = "# a\n\n**IN** · premise\n\nClaim a.\n"


def copy_example(tmp_path: Path) -> Path:
    target = tmp_path / "beliefs"
    shutil.copytree(EXAMPLE, target)
    return target


def test_the_seed_comes_back_byte_for_byte(tmp_path, cli):
    folder = copy_example(tmp_path)
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    assert cli("fmt", folder)[0] == 0
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    assert not (folder / f"{SEED}.md").read_bytes().endswith(b"\n")  # the seed has no final newline


def test_stale_derived_content_is_refreshed_and_nothing_else(tmp_path, cli):
    folder = copy_example(tmp_path)
    seed = folder / f"{SEED}.md"
    original = seed.read_text(encoding="utf-8")
    stale = (original.replace("IN derived (depth 1)", "OUT derived (depth 7)")
             .replace("IN attention-is-non-symmetric — Attention is non-symmetric:",
                      "OUT attention-is-non-symmetric — An outdated echo:"))
    seed.write_text(stale, encoding="utf-8")
    code, out, err = cli("fmt", "--check", folder)
    assert code == 1 and f"would reformat {seed}" in out and "`belief-site fmt --diff` shows how" in err
    assert seed.read_text(encoding="utf-8") == stale  # --check changes nothing
    # --diff says how (found by an authoring audit: --check named the file only), and changes nothing
    code, out, _ = cli("fmt", "--diff", folder)
    assert code == 0 and out.startswith(f"--- {seed}\n+++ {seed}\n@@ ")
    assert "\n-OUT derived (depth 7)\n+IN derived (depth 1)\n" in out
    assert "\n-OUT attention-is-non-symmetric — An outdated echo:" in out
    assert seed.read_text(encoding="utf-8") == stale and cli("fmt", "--diff", "--check", folder)[0] == 1
    code, _, _ = cli("check", folder)
    assert cli("fmt", folder)[0] == 0
    assert seed.read_text(encoding="utf-8") == original
    assert cli("fmt", "--check", folder)[0] == 0  # idempotent


def test_retracting_a_premise_flows_through_fmt(tmp_path, cli):
    folder = copy_example(tmp_path)
    premise = folder / "attention-scaled-by-sqrt-dk.md"
    premise.write_text(premise.read_text(encoding="utf-8").replace("**IN** · premise", "**OUT** · premise"),
                       encoding="utf-8")
    cli("fmt", folder)
    seed = (folder / f"{SEED}.md").read_text(encoding="utf-8")
    assert seed.startswith(f"{SEED}\n\nOUT derived (depth 1)\n")
    assert "\nOUT attention-scaled-by-sqrt-dk — " in seed
    dependent = (folder / "attention-universality-grounded-in-structural-richness.md").read_text()
    assert "**OUT** · derived (depth 2)" in dependent and f"- OUT {SEED} — " in dependent


def test_fmt_adds_no_section_a_file_lacks(tmp_path, cli):
    folder = tmp_path / "b"
    folder.mkdir()
    (folder / "a.md").write_text(PREMISE, encoding="utf-8")
    (folder / "c.md").write_text("c\n\nIN derived\n\nClaim c.\n\nJustifications\n\nSL\n\nAntecedents:\n\na",
                                 encoding="utf-8")
    cli("fmt", folder)
    assert (folder / "a.md").read_text(encoding="utf-8") == PREMISE  # no Dependents section added
    assert (folder / "c.md").read_text(encoding="utf-8").endswith("Antecedents:\n\na")  # no final newline added


def test_dependents_section_is_rewritten_from_the_network(tmp_path, cli):
    folder = tmp_path / "b"
    folder.mkdir()
    (folder / "a.md").write_text(PREMISE + "\n## Dependents\n\n- IN zz — gone\n- IN ext-only\n",
                                 encoding="utf-8")
    (folder / "c.md").write_text("# c\n\n**IN** · derived (depth 1)\n\nClaim c.\n\n## Justifications\n\n"
                                 "### SL\n\nAntecedents (all must be IN):\n\n- IN a — Claim a.\n", encoding="utf-8")
    (folder / "zz.md").write_text("# zz\n\n**IN** · premise\n\ngone\n", encoding="utf-8")
    cli("fmt", folder)
    text = (folder / "a.md").read_text(encoding="utf-8")
    # zz does not depend on a: dropped; c does: added; ext-only is external: kept unverified.
    assert text.endswith("## Dependents\n\n- IN c — Claim c.\n- IN ext-only\n")


def test_crlf_and_bom_are_kept(tmp_path, cli):
    folder = tmp_path / "b"
    folder.mkdir()
    doc = folder / "a.md"
    doc.write_bytes(b"\xef\xbb\xbfa\r\n\r\nIN derived (depth 4)\r\n\r\nClaim a.\r\n")
    cli("fmt", folder)
    assert doc.read_bytes() == b"\xef\xbb\xbfa\r\n\r\nIN premise\r\n\r\nClaim a.\r\n"


def test_fmt_refuses_a_network_json(tmp_path, cli):
    path = tmp_path / "n.json"
    path.write_text('{"nodes": {}}', encoding="utf-8")
    assert cli("fmt", path)[0] == 2


def test_a_claim_with_control_characters_is_echoed_without_them(tmp_path, cli):
    """Front matter may hold an escaped ESC or lone CR; no document may (E104): fmt and import
    once copied them into every echo of the claim, and the documents citing it dropped out."""
    folder = tmp_path / "beliefs"
    folder.mkdir()
    (folder / "a.md").write_text('---\ntext: "red \\e[31m text \\r over"\n---\n# a\n\n**IN** · premise\n',
                                 encoding="utf-8")
    (folder / "b.md").write_text("# b\n\n**IN** · derived (depth 1)\n\nClaim b.\n\n## Justifications\n\n"
                                 "### SL\n\nAntecedents (all must be IN):\n\n- IN a — old echo\n", encoding="utf-8")
    assert cli("fmt", folder)[0] == 0
    assert "- IN a — red \ufffd[31m text \ufffd over\n" in (folder / "b.md").read_text(encoding="utf-8")
    code, _, err = cli("check", folder)
    assert code == 0 and "2 beliefs, 0 errors, 0 warnings" in err
    network = tmp_path / "network.json"
    assert cli("export", folder, "-o", network)[0] == 0
    again = tmp_path / "again"
    assert cli("import", network, "-o", again)[0] == 0
    assert cli("check", again)[0] == 0
    assert cli("export", again, "-o", tmp_path / "again.json")[0] == 0
    assert (tmp_path / "again.json").read_bytes() == network.read_bytes()


def test_fmt_changes_nothing_while_the_network_has_errors(tmp_path, cli):
    """An item it cannot read (E304) empties b's justification, which then always holds: b and
    c would be rewritten IN from a network that is not the one written down."""
    folder = tmp_path / "beliefs"
    folder.mkdir()
    (folder / "a.md").write_text("# a\n\n**OUT** · premise\n\nClaim a.\n", encoding="utf-8")
    for name, rests_on in (("b", "-\tOUT a — Claim a."), ("c", "- OUT b — Claim b.")):
        (folder / f"{name}.md").write_text(
            f"# {name}\n\n**OUT** · derived (depth 1)\n\nClaim {name}.\n\n## Justifications\n\n### SL\n\n"
            f"Antecedents (all must be IN):\n\n{rests_on}\n", encoding="utf-8")
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    for flags in ((), ("--check",)):
        code, out, err = cli("fmt", *flags, folder)
        assert code == 1 and "E304" in err and "nothing changed: fix the errors above first" in err
        assert out == "" and {p.name: p.read_bytes() for p in folder.iterdir()} == before


def test_a_count_sentence_over_a_single_justification_goes(tmp_path, cli):
    """fmt wrote "This belief has 1 justifications": the sentence is for two or more (spec
    §2.3), so it goes, with its blank line (found by an authoring audit)."""
    folder = tmp_path / "beliefs"
    folder.mkdir()
    (folder / "p.md").write_text("# p\n\n**IN** · premise\n\nClaim p.\n", encoding="utf-8")
    doc = folder / "d.md"
    doc.write_text("# d\n\n**IN** · derived\n\nClaim d.\n\n## Justifications\n\n"
                   "This belief has 2 justifications — it is IN if any one holds.\n\n"
                   "### SL — from p\n\nAntecedents (all must be IN):\n\n- IN p — Claim p.\n", encoding="utf-8")
    assert cli("fmt", folder)[0] == 0
    assert doc.read_text(encoding="utf-8") == ("# d\n\n**IN** · derived\n\nClaim d.\n\n## Justifications\n\n"
                                               "### SL — from p\n\nAntecedents (all must be IN):\n\n- IN p — Claim p.\n")
    assert cli("fmt", "--check", folder)[0] == 0 and cli("check", "--strict", folder)[0] == 0


def _derived(name: str, on: str, tail: str = "") -> str:
    return (f"# {name}\n\n**IN** · derived (depth 1)\n\nClaim {name}.\n\n## Justifications\n\n"
            f"### SL — from {on}\n\nAntecedents (all must be IN):\n\n- IN {on} — Claim {on}.\n{tail}")


def test_a_dropped_count_sentence_does_not_shift_the_dependents_list(tmp_path, cli):
    """Found by a data-loss audit: with the count sentence dropped, the refreshed Dependents
    list went in two lines too low, over the lines after it (a note, the `## Summary`
    heading: the summary was lost), and a second run changed the file again."""
    folder = tmp_path / "beliefs"
    folder.mkdir()
    (folder / "a.md").write_text(PREMISE, encoding="utf-8")
    (folder / "c.md").write_text(_derived("c", "b"), encoding="utf-8")
    kept = ("\n## Dependents\n\nThese beliefs depend on this one:\n\n- OUT c — stale.\n\n"
            "A note after the list.\n\n## Summary\n\nThe summary of b.\n")
    doc = folder / "b.md"
    doc.write_text(_derived("b", "a").replace(
        "### SL", "This belief has 2 justifications — it is IN if any one holds.\n\n### SL") + kept, encoding="utf-8")
    assert cli("fmt", folder)[0] == 0
    assert doc.read_text(encoding="utf-8") == _derived("b", "a") + kept.replace("- OUT c — stale.", "- IN c — Claim c.")
    assert cli("fmt", "--check", folder)[0] == 0


def test_notes_between_dependents_stay_with_the_item_above_them(tmp_path, cli):
    """Found by a data-loss audit: the list was rewritten from its first item to its last,
    and a note a person wrote between two items went without a word."""
    folder = tmp_path / "beliefs"
    folder.mkdir()
    (folder / "a.md").write_text(PREMISE + "\n## Dependents\n\n- IN c — Claim c.\n\nNOTE: c is the one to watch.\n\n"
                                 "- IN gone — no longer.\nA note on gone.\n- IN e — Claim e.\n", encoding="utf-8")
    for name in "cde":
        (folder / f"{name}.md").write_text(_derived(name, "a"), encoding="utf-8")
    (folder / "gone.md").write_text(PREMISE.replace("a", "gone"), encoding="utf-8")  # depends on nothing
    assert cli("fmt", folder)[0] == 0
    # d is added in order; the note on c stays below c; gone goes, and its note to the end
    assert (folder / "a.md").read_text(encoding="utf-8") == (
        PREMISE + "\n## Dependents\n\n- IN c — Claim c.\n\nNOTE: c is the one to watch.\n\n"
        "- IN d — Claim d.\n- IN e — Claim e.\nA note on gone.\n")
    assert cli("fmt", "--check", folder)[0] == 0
    # a note right below the last item goes with it too (a review: it stayed where it was,
    # below a dependent added after it); one after a blank line stays after the list
    (folder / "a.md").write_text(PREMISE + "\n## Dependents\n\n- IN c — Claim c.\nA note on c.\n\nAfter the list.\n",
                                 encoding="utf-8")
    assert cli("fmt", folder)[0] == 0
    assert (folder / "a.md").read_text(encoding="utf-8") == (
        PREMISE + "\n## Dependents\n\n- IN c — Claim c.\nA note on c.\n- IN d — Claim d.\n- IN e — Claim e.\n\n"
        "After the list.\n")
    assert cli("fmt", "--check", folder)[0] == 0


def test_dependents_written_as_links_stay_links(tmp_path, cli):
    """Found by a data-loss audit: `- IN [c](c.md) — ...` came back as `- IN c — ...`, and
    `check` had nothing to say. Listed items keep their spelling; new ones follow the first
    item's, linking to the dependent's document from this one's folder."""
    folder = tmp_path / "beliefs"
    (folder / "ns").mkdir(parents=True)
    (folder / "ns" / "a.md").write_text(PREMISE.replace("# a", "# ns:a") + "\n## Dependents\n\n"
                                        "- IN [c](../c.md) — Claim c.\n", encoding="utf-8")
    for name in "cd":
        (folder / f"{name}.md").write_text(_derived(name, "ns:a").replace("Claim ns:a.", "Claim a."),
                                           encoding="utf-8")
    assert cli("fmt", folder)[0] == 0
    assert (folder / "ns" / "a.md").read_text(encoding="utf-8").endswith(
        "## Dependents\n\n- IN [c](../c.md) — Claim c.\n- IN [d](../d.md) — Claim d.\n")
    assert cli("fmt", "--check", folder)[0] == 0


def test_the_diff_shows_the_file_as_it_is_and_splits_lines_as_patch_does(tmp_path, cli):
    """Found by a data-loss audit: `--diff` compared the re-encoded text, so a lone CRLF line
    that fmt turns into LF did not show; and it split lines at U+2028 as str.splitlines
    does, which `patch` refused as malformed."""
    folder = tmp_path / "beliefs"
    folder.mkdir()
    (folder / "a.md").write_text("# a\n\n**IN** · premise\n\nClaim a\u2028second part.\n", encoding="utf-8")
    doc = folder / "b.md"
    doc.write_bytes(_derived("b", "a").replace("Claim b.\n", "Claim b, on Windows.\r\n")
                    .replace("IN a — Claim a.", "OUT a — old echo").encode("utf-8"))
    code, out, _ = cli("fmt", "--diff", folder)
    assert code == 0 and out == (
        f"--- {doc}\n+++ {doc}\n@@ -2,7 +2,7 @@\n \n **IN** · derived (depth 1)\n \n"
        "-Claim b, on Windows.\r\n+Claim b, on Windows.\n \n ## Justifications\n \n"
        "@@ -10,4 +10,4 @@\n \n Antecedents (all must be IN):\n \n"
        "-- OUT a — old echo\n+- IN a — Claim a\u2028second part.\n")
    assert cli("fmt", folder)[0] == 0
    assert doc.read_bytes() == _derived("b", "a").replace("Claim b.", "Claim b, on Windows.").replace(
        "Claim a.", "Claim a\u2028second part.").encode("utf-8")
