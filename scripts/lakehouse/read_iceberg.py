"""Reads the lakehouse's Iceberg tables with PyIceberg (SqlCatalog + pyarrow): a reader no one here wrote.

The catalog comes from the environment, as `scripts/stack.sh up --with lakehouse` prints it:
  ICEBERG_CATALOG_URI   the catalog database as a SQLAlchemy URL (postgresql+psycopg2://user:pw@host:port/db)
  ICEBERG_WAREHOUSE     where new tables' files go (file:///...)
  ICEBERG_CATALOG_NAME  the catalog's name in that database (default gamedata; the sink's `iceberg.catalog`)

Commands (one JSON document on stdout):
  counts <namespace> <table>...   {"<table>": rows | null when the table does not exist}
  rows <namespace>.<table>        {"columns": [...], "rows": [...]}: timestamps as epoch ms, nested structs as
                                  objects, lists as arrays, maps as objects
  snapshots <namespace>.<table>   [{"id", "timestamp_ms", "summary"}] oldest first
  drop <namespace>                drops its tables from the catalog (not their files) and the namespace
  latest <namespace>.<table>      like rows, but the latest version per _id: docs/consuming.md's query, run by
                                  DuckDB over PyIceberg's scan (the table is `t`)
"""

import base64
import datetime
import decimal
import json
import os
import sys

from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.exceptions import NoSuchNamespaceError, NoSuchTableError


def catalog():
    return SqlCatalog(
        os.environ.get("ICEBERG_CATALOG_NAME", "gamedata"),
        uri=os.environ["ICEBERG_CATALOG_URI"],
        warehouse=os.environ["ICEBERG_WAREHOUSE"],
    )


def plain(value):
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=datetime.timezone.utc)
        return int(round(value.timestamp() * 1000))
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def counts(namespace, tables):
    cat = catalog()
    out = {}
    for name in tables:
        try:
            table = cat.load_table(f"{namespace}.{name}")
        except (NoSuchTableError, NoSuchNamespaceError):
            out[name] = None
            continue
        snapshot = table.current_snapshot()
        out[name] = 0 if snapshot is None else table.scan().to_arrow().num_rows
    return out


def rows(identifier):
    table = catalog().load_table(identifier)
    arrow = table.scan().to_arrow()
    # maps as dicts (pyarrow's default is a list of (key, value) pairs)
    return {"columns": arrow.column_names, "rows": [plain(r) for r in arrow.to_pylist(maps_as_pydicts="strict")]}


def snapshots(identifier):
    table = catalog().load_table(identifier)
    return [
        {"id": s.snapshot_id, "timestamp_ms": s.timestamp_ms, "summary": dict(s.summary.additional_properties)}
        for s in table.snapshots()
    ]


# docs/consuming.md, "What a reader sees": the latest version per _id of a changing resource's history
LATEST_SQL = """
SELECT * EXCLUDE (rn) FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY _id ORDER BY updatedAt DESC NULLS LAST, __v DESC NULLS LAST) AS rn
  FROM t
) WHERE rn = 1
"""


def latest(identifier):
    import duckdb

    t = catalog().load_table(identifier).scan().to_arrow()
    con = duckdb.connect()
    con.register("t", t)
    sql = LATEST_SQL if "updatedAt" in t.column_names else LATEST_SQL.replace("updatedAt DESC NULLS LAST, ", "")
    arrow = con.execute(sql).fetch_arrow_table()
    return {"columns": arrow.column_names, "rows": [plain(r) for r in arrow.to_pylist(maps_as_pydicts="strict")]}


def drop(namespace):
    """Drops every table of the namespace (catalog entries; the files stay for the caller to remove) and the
    namespace. Returns the tables dropped."""
    cat = catalog()
    try:
        tables = cat.list_tables(namespace)
    except NoSuchNamespaceError:
        return []
    for identifier in tables:
        cat.drop_table(identifier)
    cat.drop_namespace(namespace)
    return [".".join(t) for t in tables]


def main(argv):
    if len(argv) >= 3 and argv[0] == "counts":
        result = counts(argv[1], argv[2:])
    elif len(argv) == 2 and argv[0] == "rows":
        result = rows(argv[1])
    elif len(argv) == 2 and argv[0] == "snapshots":
        result = snapshots(argv[1])
    elif len(argv) == 2 and argv[0] == "latest":
        result = latest(argv[1])
    elif len(argv) == 2 and argv[0] == "drop":
        result = drop(argv[1])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    json.dump(result, sys.stdout, separators=(",", ":"))
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
