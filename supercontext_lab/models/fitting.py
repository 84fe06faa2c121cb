"""Fitting what a model is sent into its window: tool results cut, history trimmed.

Two rules, used by the scout for each round of tool results and by the OpenAI-compatible
client for each request it sends (the budget is :mod:`.window`'s):

* :func:`fit_content` cuts a text, or the long strings of a JSON result (a recalled
  note's ``content``, a file read), to the passages that answer the request
  (:func:`~supercontext_lab.reading.excerpts.excerpt`: whole units, ranked by the reading
  model, a marker saying what was left out). The room is shared so that short strings
  stay whole and the long ones share the rest; a JSON result stays JSON, the marker of a
  cut string beside it (``"content_cut": "[cut: 1.0 MB text, 3 of 6,781 passages
  kept]"``), so that what a model quotes from ``content`` is the source's own words.
  Lists that still do not fit keep their first items, with a marker item.
* :func:`fit_request` holds one request to the budget. What still overflows is trimmed
  oldest first: whole exchanges (a call and its tool results go together), never a
  system message, the first user message (the task and its instructions) or the newest
  exchange, and the first user message says how many messages were left out. When that
  is not enough, the largest tool results are cut to their passages, then, when even that
  is not enough, the largest other messages. What cannot be made to fit (a system prompt
  larger than the window, a reply of a hundred tool calls) is refused with a
  :class:`ModelError` when the model declared its window; when the window is only
  assumed, the request is sent as far as it was fitted and a warning logged.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from .._bounded import json_loads
from .._json import to_json
from ..errors import ModelError
from ..reading.excerpts import excerpt, size_text
from ..reading.relevance import RequestTerms, request_terms
from .base import Message, ModelInfo
from .request import ChatRequest
from .window import ContextBudget, payload_bytes, tokens_in

__all__ = ["LONG_STRING_CHARS", "fit_content", "fit_request", "fit_shares", "fit_texts"]

logger = logging.getLogger(__name__)

LONG_STRING_CHARS = 400
"""A string of a JSON result at most this long is kept whole (a key, a score, a title):
the room goes to the long texts, which are cut to their passages."""

_ATTEMPTS = 4
# Escapes and multi-byte characters make a string weigh more in JSON than its length; a
# cut that still overflows is tried again, tighter, at most this many times.


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def fit_shares(sizes: Sequence[int], room: int) -> list[int]:
    """Each of ``sizes`` capped so that together they take at most ``room``: the smaller
    ones whole, the larger ones an equal share of what is left (water filling)."""
    shares = [0] * len(sizes)
    left = max(room, 0)
    order = sorted(range(len(sizes)), key=lambda index: sizes[index])
    for rank, index in enumerate(order):
        share = min(sizes[index], left // (len(order) - rank))
        shares[index] = share
        left -= share
    return shares


def fit_content(text: str, max_bytes: int, request: RequestTerms) -> str:
    """``text`` as it may be sent in ``max_bytes`` (UTF-8): whole when it fits, else its
    passages that answer ``request``; a JSON object or array stays one, its long strings
    cut (see the module docstring)."""
    if _size(text) <= max_bytes:
        return text
    data: Any = None
    if text.lstrip()[:1] in ("{", "["):
        try:
            data = json_loads(text)
        except ValueError:
            data = None
    if not isinstance(data, dict | list):
        return _fit_text(text, max_bytes, request)
    fitted = _fit_strings(data, max_bytes, request)
    if _size(to_json(fitted)) > max_bytes:
        fitted = _fit_lists(fitted, max_bytes)
    out = to_json(fitted)
    if _size(out) > max_bytes:
        return f"[cut: {size_text(len(text))} result left out]"
    return out


def fit_texts(
    texts: Sequence[str],
    room: int,
    request: RequestTerms,
    *,
    floor: int = 0,
    asked: str = "",
) -> list[str]:
    """``texts`` cut so that, written as JSON strings (as a request carries them), they
    weigh about ``room`` bytes together: the short ones whole, the long ones sharing the
    rest (:func:`fit_shares`; each at least ``floor``), each by :func:`fit_content`. A
    text that is ``asked`` itself, the request, keeps its opening: it is not ranked
    against itself."""
    weights = [_size(to_json(text)) for text in texts]
    out: list[str] = []
    for text, weight, share in zip(texts, weights, fit_shares(weights, room), strict=True):
        share = max(share, floor)
        if share >= weight:
            out.append(text)
            continue
        terms = request_terms("") if asked and text == asked else request
        # Bytes of the text itself for its share of the body, at its own escaping.
        cut = fit_content(text, share * _size(text) // weight, terms)
        out.append(cut if len(cut) < len(text) else text)
    return out


def _fit_text(text: str, max_bytes: int, request: RequestTerms) -> str:
    limit = max_bytes * len(text) // max(_size(text), 1)
    for _ in range(_ATTEMPTS):
        cut = excerpt(text, request, max(limit, 0)).joined
        if _size(cut) <= max_bytes:
            return cut
        limit = limit * max_bytes // _size(cut) - 1
    return excerpt(text, request, 0).joined


def _long_strings(node: Any, found: list[tuple[Any, Any, str]]) -> None:
    """Every string longer than :data:`LONG_STRING_CHARS` in ``node``, with the container
    and key (or index) that hold it; iterative, so any nesting is walked."""
    pending = [node]
    while pending:
        current = pending.pop()
        items = current.items() if isinstance(current, dict) else enumerate(current)
        for key, value in items:
            if isinstance(value, str) and len(value) > LONG_STRING_CHARS:
                found.append((current, key, value))
            elif isinstance(value, dict | list):
                pending.append(value)


def _fit_strings(data: Any, max_bytes: int, request: RequestTerms) -> Any:
    """``data`` (parsed here, so cut in place) with its long strings cut to share the
    room the rest leaves."""
    found: list[tuple[Any, Any, str]] = []
    _long_strings(data, found)
    if not found:
        return data
    weights = [_size(to_json(value)) for _, _, value in found]
    fixed = _size(to_json(data)) - sum(weights)
    room = max_bytes - fixed
    for _ in range(_ATTEMPTS):
        shares = fit_shares(weights, room)
        for (holder, key, value), weight, share in zip(found, weights, shares, strict=True):
            # Characters for the bytes it may take, at this string's own bytes a character.
            kept = excerpt(value, request, share * len(value) // weight)
            if isinstance(holder, dict):
                # The marker beside the text, not in it: what the model may quote is the
                # source's own words.
                holder[key] = kept.text
                if kept.marker:
                    holder[f"{key}_cut"] = kept.marker
            else:
                holder[key] = kept.joined
        over = _size(to_json(data)) - max_bytes
        if over <= 0:
            break
        # Kept passages weigh more in JSON than the text's average (their gaps, the
        # marker's key): tighter by what was over and a tenth more.
        room -= over + room // 10
    return data


def _fit_lists(data: Any, max_bytes: int) -> Any:
    """``data`` with its largest lists keeping their first items until it fits, each with
    a marker item saying how many were kept."""
    lists: list[list[Any]] = []
    pending = [data]
    while pending:
        current = pending.pop()
        if isinstance(current, list):
            lists.append(current)
        values = current.values() if isinstance(current, dict) else current
        pending.extend(value for value in values if isinstance(value, dict | list))
    for items in sorted(lists, key=lambda items: -_size(to_json(items))):
        over = _size(to_json(data)) - max_bytes
        if over <= 0:
            break
        total = len(items)
        sizes = [_size(to_json(item)) + 1 for item in items]
        marker_room = 60
        while items and over + marker_room > 0:
            over -= sizes[len(items) - 1]
            items.pop()
        items.append(f"[cut: {len(items)} of {total} items kept]")
    return data


# --- one request held to the budget ---------------------------------------------------


def _groups(messages: Sequence[Message]) -> list[list[int]]:
    """The messages' indexes by exchange: an assistant message with tool calls and the
    tool results after it go together (a server refuses a result without its call)."""
    groups: list[list[int]] = []
    for index, message in enumerate(messages):
        if message.role == "tool" and groups and messages[groups[-1][0]].tool_calls:
            groups[-1].append(index)
        else:
            groups.append([index])
    return groups


def _message_bytes(message: Message) -> int:
    return _size(to_json(message.to_openai())) + 1


def _request_text(request: ChatRequest) -> str:
    """What the request asks, for ranking passages: the user's message the scout passes
    with its choices, else the newest user message."""
    if request.choices is not None and request.choices.request:
        return request.choices.request
    users = [m.content for m in request.messages if m.role == "user" and m.content]
    return users[-1] if users else ""


def _trimmed(messages: list[Message], over: int, window: int) -> list[Message] | None:
    """``messages`` with the oldest exchanges left out until about ``over`` bytes are
    gone, or ``None`` when none may go."""
    groups = _groups(messages)
    first_user = next((i for i, m in enumerate(messages) if m.role == "user"), None)
    keep = {i for i, m in enumerate(messages) if m.role == "system"}
    keep.update(groups[-1])
    if first_user is not None:
        keep.add(first_user)
    dropped: set[int] = set()
    freed = 0
    for group in groups:
        if freed > over:
            break
        if any(index in keep for index in group):
            continue
        dropped.update(group)
        freed += sum(_message_bytes(messages[index]) for index in group)
    if not dropped:
        return None
    note = (
        f"[{len(dropped)} earlier messages (about {tokens_in(freed):,} tokens) left out to "
        f"fit the model's context window of {window:,} tokens]"
    )
    out = [message for index, message in enumerate(messages) if index not in dropped]
    if first_user is not None:
        opening = out.index(messages[first_user])
        out[opening] = replace(out[opening], content=f"{out[opening].content or ''}\n\n{note}")
    return out


def _cut(
    messages: list[Message], over: int, request: RequestTerms, asked: str, *, results: bool
) -> list[Message] | None:
    """``messages`` with about ``over`` bytes cut from their contents (:func:`fit_texts`);
    with ``results``, only tool results are cut, else every message but the system
    prompt. ``None`` when nothing could be cut."""
    chosen = [
        i
        for i, m in enumerate(messages)
        if m.content and (m.role == "tool" if results else m.role != "system")
    ]
    contents = [messages[i].content or "" for i in chosen]
    room = sum(_size(to_json(content)) for content in contents) - over
    out = list(messages)
    for index, cut in zip(chosen, fit_texts(contents, room, request, asked=asked), strict=True):
        out[index] = replace(messages[index], content=cut)
    return None if out == messages else out


def _emptied(messages: list[Message]) -> list[Message]:
    """``messages`` with every content but the system prompt's gone: the least that any
    cut can leave."""
    return [m if m.role == "system" else replace(m, content="") for m in messages]


def fit_request(
    request: ChatRequest, build: Callable[[ChatRequest], dict[str, Any]], model: ModelInfo
) -> tuple[ChatRequest, dict[str, Any]]:
    """``request`` and its payload (``build(request)``) held to the budget of ``model``
    (:meth:`ContextBudget.of`, with the payload's ``max_tokens``; see the module
    docstring); :class:`ModelError` when even its system prompt does not fit."""
    payload = build(request)
    reply = payload.get("max_tokens")
    budget = ContextBudget.of(model, reply if isinstance(reply, int) else None)
    asked = _request_text(request)
    terms = request_terms(asked)
    messages = list(request.messages)
    for _ in range(3 * _ATTEMPTS):
        over = payload_bytes(payload) - budget.prompt_bytes
        if over <= 0:
            return request, payload
        fitted = _trimmed(messages, over, budget.window)
        if fitted is None:
            least = replace(request, messages=tuple(_emptied(messages)))
            if payload_bytes(build(least)) > budget.prompt_bytes:
                break  # no cut can make it fit: the contents are left as they are
            fitted = _cut(messages, over, terms, asked, results=True) or _cut(
                messages, over, terms, asked, results=False
            )
        if fitted is None:
            break
        messages = fitted
        request = replace(request, messages=tuple(messages))
        payload = build(request)
    needed = tokens_in(payload_bytes(payload))
    if needed <= budget.prompt_tokens:
        return request, payload
    if not budget.declared:
        # The window is only assumed: the server's may be larger, so what is left (the
        # system prompt, the instructions, a reply's calls) is sent and the server decides.
        logger.warning(
            "A request of about %d tokens is sent to a model whose context window is not "
            "known (%d tokens assumed); set context_tokens on its route.",
            needed,
            budget.window,
        )
        return request, payload
    raise ModelError(
        f"the request needs about {needed:,} tokens, more than the model's context window "
        f"of {budget.window:,} tokens leaves ({budget.reply:,} kept for the reply), even "
        "with its history trimmed and its tool results cut; set context_tokens on the "
        "model's route if its window is larger"
    )
