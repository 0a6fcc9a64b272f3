"""What ftl-reasons (the reference library) makes of a network.json: its import, then its full
recompute. Run in a fresh interpreter (no library cache survives):

    python library_import.py NETWORK_JSON

Prints {"values": {id: value}, "pinned": [ids the import retracted]}.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile


def main(source: str) -> int:
    from reasons import api
    from reasons.storage import Storage

    with tempfile.TemporaryDirectory() as folder:
        db = os.path.join(folder, "reasons.db")
        api.init_db(db)
        api.import_json(source, db_path=db)
        api.clear_network_cache(db)
        network = Storage(db).load()
        pinned = sorted(i for i, n in network.nodes.items() if n.metadata.get("_retracted"))
        network.recompute_all()
        print(json.dumps({"values": {i: n.truth_value for i, n in network.nodes.items()}, "pinned": pinned}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
