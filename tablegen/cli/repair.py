"""``tablegen repair STORE --rebuild-manifest``: rebuild a store's lost manifest record from its data.

The command-line side of :func:`tablegen.store.rebuild.rebuild_manifest_record`: the store's template and
provenance are recomputed from the config the store records (:func:`tablegen.batch.job.store_template`,
:func:`~tablegen.batch.job.store_attributes`), the store is checked against them and against its own
per-region digests, and the record is written only if the metadata matches.  Damaged chunks are not this
command's: they are data, not what the record vouches for, so the record is rebuilt and the undamaged regions
kept; ``tablegen run CONFIG --store STORE`` then recomputes the damaged ones.  Registered by
:mod:`tablegen.cli.main`.
"""

from __future__ import annotations

import json

from tablegen.cli.options import storage_options_argument, storage_options_from
from tablegen.errors import StoreIntegrityError

#: JobConfig fields stored as JSON lists that the config holds as tuples.
_TUPLE_FIELDS = ("P", "N", "metrics", "Cs", "alphas", "chunks", "shard", "tail_probabilities")


def add_repair_parser(sub) -> None:
    """Add ``repair`` with its ``run`` default."""
    p = sub.add_parser("repair", help="rebuild a store's lost manifest record from its data (checked first)")
    p.add_argument("store", help="store path or fsspec URL")
    p.add_argument("--rebuild-manifest", action="store_true", required=True,
                   help="rebuild the manifest's record of what was written (lost), after checking every written "
                        "chunk against its own digest and the metadata against the config the store records; "
                        "nothing is written if anything differs (exit 3)")
    p.add_argument("--dry-run", action="store_true", help="check only, write nothing")
    storage_options_argument(p)
    p.set_defaults(run=_run_repair)


def stored_config(attrs: dict, url: str):
    """The :class:`~tablegen.batch.config.JobConfig` a store records (attribute ``config``), at ``url``."""
    from dataclasses import fields

    from tablegen.batch.config import JobConfig

    try:
        record = json.loads(attrs["config"])
        power = record.pop("power", None) or {}  # the power: section, recorded as the config gives it
        record.update(power_levels=tuple(power.get("levels", ())), power_max_seconds=power.get("max_seconds"))
        known = {f.name for f in fields(JobConfig)}
        record = {k: tuple(v) if k in _TUPLE_FIELDS else v for k, v in record.items() if k in known}
        return JobConfig(**record)
    except (KeyError, TypeError, ValueError) as error:
        raise StoreIntegrityError(f"store {url!r}: the config it records (root attribute config) cannot be read "
                                  f"({type(error).__name__}: {error}); its manifest record cannot be rebuilt") \
            from None


def provenance(config, attrs: dict, url: str) -> dict:
    """The root attributes ``config`` gives a store (:func:`~tablegen.batch.job.store_attributes`), its config
    record taken as stored once each field it holds is the config's (a store written before a field existed, such
    as ``device``, lacks it); the config's hash is then what vouches for the record."""
    from tablegen.batch.job import store_attributes

    attributes = store_attributes(config)
    stored, made = json.loads(attrs["config"]), json.loads(attributes["config"])
    differing = sorted(key for key in stored if stored[key] != made.get(key))
    if differing:
        raise StoreIntegrityError(f"store {url!r}: the config it records has fields no config gives "
                                  f"({', '.join(differing)}); its manifest record cannot be rebuilt")
    return {**attributes, "config": attrs["config"]}


def _with_added_power(config, args):
    """``config`` with the power: section of a minimum detectable AUC added to its store afterwards
    (:func:`tablegen.store.migrate.add_minimum_detectable`: the config the store records has none), for its
    template only: the provenance stays the config's own."""
    from dataclasses import replace

    from tablegen.store.migrate import added_power_section

    if config.power_levels:
        return config
    added = added_power_section(args.store, storage_options_from(args))
    return config if added is None else replace(config, power_levels=added[0], power_max_seconds=added[1])


def _run_repair(args) -> int:
    from tablegen.batch.job import store_template
    from tablegen.store.integrity import check_integrity
    from tablegen.store.rebuild import rebuild_manifest_record

    def expected(attrs: dict) -> tuple:
        config = stored_config(attrs, args.store)
        return store_template(_with_added_power(config, args)), provenance(config, attrs, args.store)

    report = rebuild_manifest_record(args.store, expected, storage_options_from(args), dry_run=args.dry_run)
    what = "would be rebuilt (--dry-run: nothing written)" if args.dry_run else "rebuilt"
    checked = f"{report.regions_checked:,} written regions ({report.chunks_checked:,} chunks)"
    print(f"{args.store}: manifest record {what}: the metadata and coordinates match the config the store records, "
          "and the record gives the manifest the digest its root recorded; "
          + (f"{checked} match their digests" if not report.damaged else
             f"of {checked} checked, {len(report.damaged):,} chunks are damaged (data, which a resume recomputes; "
             "the other regions are kept): " + "; ".join(map(str, report.damaged[:10]))))
    if args.dry_run:
        if report.damaged:
            print(f"{args.store}: then `tablegen run CONFIG --store {args.store}` recomputes the damaged chunks")
        return 0
    integrity = check_integrity(args.store, storage_options_from(args))
    if integrity.ok:
        print(f"{args.store}: integrity: {integrity.chunks_checked:,} chunks match the manifest")
        return 0
    print(f"{args.store}: still to repair: " + "; ".join(map(str, integrity.problems[:10]))
          + f"; `tablegen run CONFIG --store {args.store}` repairs it")
    return 3
