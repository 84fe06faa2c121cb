"""Jupyter Server extension: the Super Context flag over REST.

``GET /supercontext/api/super-context`` answers ``{"enabled": bool, "source":
"env"|"file"|"default"}``; ``PUT`` with the body ``{"enabled": bool}`` saves the flag in
the lab's config file and answers the same shape (the effective value: an environment
override still wins). Both are authenticated like the rest of Jupyter's API. A body that
is not a small JSON object with a boolean ``enabled`` (too large, nested, not JSON, a key
given twice, a wrong type) gets a 400 with a one-line JSON ``message``, and the config
file is not touched.

The extension is enabled on install by ``jupyter-config/jupyter_server_config.d/
supercontext_lab.json``; Jupyter Server finds this module through
``supercontext_lab._jupyter_server_extension_points``.
"""

from __future__ import annotations

import json
from typing import Any

import tornado.web
from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from jupyter_server.utils import url_path_join

from .._text import one_line
from ..config import set_super_context_enabled, super_context_status
from ..errors import ConfigError, DuplicateKeyError, InputLimitError, InputTooDeepError
from ..limits import json_loads

__all__ = ["ROUTE", "SuperContextHandler"]

ROUTE = "supercontext/api/super-context"
"""The endpoint, relative to the server's base URL."""

_AUTH_RESOURCE = "supercontext"


def _flag_payload() -> dict[str, Any]:
    status = super_context_status()
    return {"enabled": status.enabled, "source": status.source}


_MAX_BODY_BYTES = 4096
"""A PUT body is ``{"enabled": true}``; anything much larger is not one."""
_MAX_BODY_DEPTH = 8
_HOW = 'send {"enabled": true} or {"enabled": false}'
# The answer to each refusal of the bounded JSON reader, decided by its type (the first
# that matches); the last is NaN or Infinity, the other refusal of a body this small.
_REFUSALS: tuple[tuple[type[InputLimitError], str], ...] = (
    (InputTooDeepError, "The body is nested too deeply ({})"),
    (DuplicateKeyError, "The body is ambiguous: {}"),
    (InputLimitError, "The body is not JSON ({})"),
)


def _bad_body(reason: str) -> tornado.web.HTTPError:
    # One line, whatever the body held: it is echoed to the client and to the log.
    return tornado.web.HTTPError(400, one_line(f"{reason}; {_HOW}.", 280))


def _requested_value(body: bytes) -> bool:
    """The ``enabled`` value of a PUT body, or a 400 saying what is wrong with it."""
    if len(body) > _MAX_BODY_BYTES:
        raise _bad_body(f"The body is too large ({len(body):,} bytes)")
    try:
        data = json_loads(
            body.decode("utf-8"), max_depth=_MAX_BODY_DEPTH, allow_nan=False, unique_keys=True
        )
    except InputLimitError as exc:
        wording = next(text for kind, text in _REFUSALS if isinstance(exc, kind))
        raise _bad_body(wording.format(exc)) from None
    except (UnicodeDecodeError, ValueError):
        raise _bad_body("The body is not JSON") from None
    if not isinstance(data, dict) or "enabled" not in data:
        raise _bad_body('The body needs an "enabled" key')
    value = data["enabled"]
    if not isinstance(value, bool):
        raise _bad_body(f'"enabled" must be true or false, not {json.dumps(value)[:40]}')
    return value


class SuperContextHandler(APIHandler):
    """``GET`` reads the effective flag and its source; ``PUT`` persists a new value."""

    auth_resource = _AUTH_RESOURCE

    def _answer(self) -> None:
        try:
            payload = _flag_payload()
        except ConfigError as exc:
            # A corrupt config file is reported, never silently reset.
            raise tornado.web.HTTPError(500, str(exc)) from exc
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(payload))

    @tornado.web.authenticated
    @authorized
    def get(self) -> None:
        """Answer ``{"enabled": bool, "source": "env"|"file"|"default"}``."""
        self._answer()

    @tornado.web.authenticated
    @authorized
    def put(self) -> None:
        """Save ``{"enabled": bool}`` in config.toml, then answer like ``GET``."""
        value = _requested_value(self.request.body)
        try:
            set_super_context_enabled(value)
        except ConfigError as exc:
            raise tornado.web.HTTPError(500, str(exc)) from exc
        self._answer()


def _load_jupyter_server_extension(serverapp: Any) -> None:
    """Register the handler under the server's base URL."""
    web_app = serverapp.web_app
    route = url_path_join(web_app.settings["base_url"], ROUTE)
    web_app.add_handlers(".*$", [(route, SuperContextHandler)])
    serverapp.log.info("supercontext_lab: Super Context flag served at %s", route)


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    """This module is its own extension point (the package points here too)."""
    return [{"module": "supercontext_lab.lab.server"}]
