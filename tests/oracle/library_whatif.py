"""Ask ftl-reasons (the reference library) what retracting each premise would change.

Run in a fresh interpreter per network so that no library cache survives between
networks:  python library_whatif.py NETWORK_JSON DB_PATH PREMISE_ID...

Prints one JSON object {"resurrected": [...], "premises": {premise: {...}}}:
- "resurrected": derived nodes whose imported value disagrees with their own justifications
  and that the library's import did not pin (stored OUT, computed OUT on insertion before
  their antecedents, spec §4): its own full recompute would bring them IN although nothing
  was retracted. Their lost pins are restored in the database
  before any what-if, so that the cascades measure the retraction and nothing else.
- per premise "whatif": ids the library's `what_if_retract` reports (retracted + restored);
  "stale": ids whose what-if value the library's own full recompute (`recompute_all`,
  spec §1.4) takes back, starting from the state what-if describes. Non-empty only when
  the incremental `_propagate` path left a stale value (non-monotonic diamonds).
"""

from __future__ import annotations

import copy
import json
import sys


def main(argv: list[str]) -> int:
    from reasons import api
    from reasons.storage import Storage

    source, db, premises = argv[0], argv[1], argv[2:]
    api.init_db(db)
    api.import_json(source, db_path=db)
    # The network import_json leaves in the cache has an incomplete dependents index (a node
    # inserted after its referrers is linked only on the next load, spec §1.4): read the
    # database afresh, as a new `reasons what-if` invocation would.
    api.clear_network_cache(db)
    loaded = _load(Storage, db)
    probe = copy.deepcopy(loaded)
    resurrected = sorted(nid for nid, n in probe.nodes.items() if n.justifications and not
                         n.metadata.get("_retracted") and probe._compute_truth(n) != n.truth_value)
    if resurrected:
        for nid in resurrected:
            loaded.nodes[nid].metadata["_retracted"] = True
        store = Storage(db)
        try:
            store.save(loaded)
        finally:
            store.close()
        api.clear_network_cache(db)
        loaded = _load(Storage, db)
    if copy.deepcopy(loaded).recompute_all():
        raise SystemExit("the library's loaded network is not a fixpoint of its own recompute")
    before = {nid: n.truth_value for nid, n in loaded.nodes.items()}
    out = {}
    for pid in premises:
        result = api.what_if_retract(pid, db_path=db)
        changed = [c["id"] for c in result["retracted"] + result["restored"]]
        state = copy.deepcopy(loaded)
        state.nodes[pid].truth_value = "OUT"
        state.nodes[pid].metadata["_retracted"] = True
        for nid in changed:
            state.nodes[nid].truth_value = "OUT" if before[nid] == "IN" else "IN"
        stale = state.recompute_all()
        out[pid] = {"already_out": result["already_out"], "whatif": sorted(changed),
                    "stale": sorted(stale)}
    json.dump({"resurrected": resurrected, "premises": out}, sys.stdout)
    return 0


def _load(storage_class, db: str):
    store = storage_class(db)
    try:
        return store.load()
    finally:
        store.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
