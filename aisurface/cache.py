"""/api/ai and MCP answers, kept; HTTP caching of /api/ai answers (ETag, 304, Cache-Control).

The answers are the rendered JSON bytes every caller gets (never anything per caller). Each
process keeps them row by row (core/rowcopies.py `AnswerCopies`): an answer names the
startups it shows and, for a list, the filters a startup must pass to join it (`involves`,
called by what builds it); a write drops only the answers showing a startup it changed or
that the changed startup may now join, so a write shows on /api/ai at the same moment as on
/api/v1 and MCP, and a write elsewhere leaves them be. Between servers they are shared under
the data epoch with their scope and the data stamp they were built after: a process uses a
shared answer while no change it applied since that stamp may have changed the answer (the
same rule as its own copies), so a founder's edit elsewhere does not make every process build
every answer again. Entries also end after
AI_CACHE_SECONDS, for what changes with time alone (an add-on expiring). 304s are Django's
conditional-GET rules (`get_conditional_response`: weak comparison, `*`).
"""

import hashlib
import time
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from dataclasses import asdict
from functools import partial
from typing import Any

import orjson
from django.conf import settings
from django.http import HttpResponse
from django.utils.cache import get_conditional_response
from rest_framework.request import Request

from core import readcache
from core.formats import site_url
from core.renderers import JSONRenderer
from startups.aiselectors import AiFilters, ai_enabled_startups, ai_startup_may_join
from startups.models import Startup

# v6: shared under the data epoch with the stamp each answer was built after.
AI_CACHE_VERSION = "ai-v6"


def _read_changed(ids: set[int]) -> dict[int, Startup]:
    """The changed startups that may be in an answer (AI-enabled), read anew from the primary
    (the newest token may be past what a replica has replayed)."""
    rows = ai_enabled_startups(db=readcache.PRIMARY).filter(id__in=ids).select_related("owner")
    return {startup.id: startup for startup in rows}


def _answer_bytes(entry: dict) -> int:
    """What a kept answer holds, roughly: its body and its scope's ids."""
    return len(entry["body"]) + 8 * len(entry["ids"] or ())


# More than the identities a varied load asks (words x limits): under writes a miss here is a
# build, since the shared entries are filed under the token. Bounded in bytes too
# (AI_ANSWER_BYTES): 5,000 answers of up to ~25 KB each would be 125 MB a process.
_AI_ANSWERS = readcache.answer_copies(
    5_000, _read_changed, max_bytes=settings.AI_ANSWER_BYTES, size=_answer_bytes
)
# The scope of the answer being built: {"ids": [...], "joins": {"filters": AiFilters as a
# dict, "shown": n, "lowest_mrr": m} or None}.
_SCOPE: ContextVar[dict | None] = ContextVar("ai_answer_scope", default=None)


def involves(startups: Iterable[Startup], *, filters: AiFilters | None = None) -> None:
    """Tell the answer being built which startups it shows (in order) and, for a list
    (`startups.aiselectors.ai_startup_list`), the filters it was read with: a startup that
    passes them (`ai_startup_may_join`) after a write may join it. An answer whose build
    never calls this follows every write."""
    scope = _SCOPE.get()
    if scope is None:
        return
    shown = list(startups)
    scope["ids"] = [*(scope["ids"] or []), *(startup.id for startup in shown)]
    if filters is not None:
        lowest = shown[-1].mrr if shown else None
        scope["joins"] = {"filters": asdict(filters), "shown": len(shown), "lowest_mrr": lowest}


def _joins(entry: dict) -> Callable[[Startup], bool] | None:
    joins = entry.get("joins")
    if joins is None:
        return None
    filters = AiFilters(**joins["filters"])
    return partial(
        ai_startup_may_join, filters=filters, shown=joins["shown"], lowest_mrr=joins["lowest_mrr"]
    )


def ai_answer(*, identity: dict, build: Callable[[], Any]) -> dict:
    """{"body": JSON bytes, "etag": strong validator, "built": epoch seconds, and the scope}
    for the answer named by `identity` (site, path and filters; or site, MCP tool and
    arguments), built by `build` on a miss (read `readcache.fill_db()`, call `involves`);
    what `build` raises is never kept."""
    seconds = settings.AI_CACHE_SECONDS
    raw = orjson.dumps(identity, option=orjson.OPT_SORT_KEYS, default=str)
    stamp = readcache.row_stamp()  # before the database
    entry = _AI_ANSWERS.lookup(raw, stamp)
    now = time.time()
    if entry is not None and entry["built"] + seconds > now:
        return entry
    # Shared under the data epoch, not the token: an entry another process built is used
    # while no change this process applied since its build may have changed it.
    key = readcache.shared_key(
        AI_CACHE_VERSION, stamp and stamp[0], hashlib.sha256(raw).hexdigest()
    )
    entry = readcache.shared_get(key)
    if entry is not None and not _shared_holds(entry, stamp, now):
        entry = None
    if entry is None:
        scope = {"ids": None, "joins": None}
        reset = _SCOPE.set(scope)
        try:
            body = JSONRenderer().render(build())
        finally:
            _SCOPE.reset(reset)
        etag = f'"{hashlib.sha256(body).hexdigest()[:32]}"'
        entry = {"body": body, "etag": etag, "built": now, "stamp": stamp, **scope}
        readcache.shared_set(key, entry, seconds)  # the newest build replaces an older one
    built = None if entry["stamp"] is None else tuple(entry["stamp"])
    _AI_ANSWERS.put(raw, entry, built, ids=entry["ids"], joins=_joins(entry))
    return entry


def _shared_holds(entry: dict, stamp: tuple | None, now: float) -> bool:
    """Whether a shared answer may serve a request holding `stamp`: not aged out, and built
    after a data stamp whose later changes, as this process applied them, leave it as it is
    (`AnswerCopies.current`). Without a stamp (no kept copies) it is used until it ages out."""
    if entry["built"] + settings.AI_CACHE_SECONDS <= now:
        return False
    if stamp is None:
        return entry["stamp"] is None
    if entry["stamp"] is None:
        return False
    return _AI_ANSWERS.current(tuple(entry["stamp"]), ids=entry["ids"], joins=_joins(entry))


def cached_response(request: Request, *, parts: dict, build: Callable[[], dict]) -> HttpResponse:
    """The JSON built by `build` (kept as rendered bytes), with its ETag and 304 handling."""
    seconds = settings.AI_CACHE_SECONDS
    identity = {"site": site_url(request), "path": request.path, **parts}
    entry = ai_answer(identity=identity, build=build)
    headers = {
        "ETag": entry["etag"],
        "Cache-Control": f"public, max-age={seconds}",
        "Age": str(max(0, int(time.time() - entry["built"]))),
    }
    response = HttpResponse(entry["body"], content_type=JSONRenderer.media_type, headers=headers)
    return get_conditional_response(request, etag=entry["etag"], response=response) or response
