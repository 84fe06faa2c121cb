"""Nothing let in: the web fetcher's address policy, reads confined to ``files/``, the API
key kept out of everything shown, and untrusted text escaped in the HTML the core makes.

Traffic goes only to servers these tests start on 127.0.0.1 or [::1]. The suite-wide
network guard (see conftest) refuses and records any connection to another address and
answers host-name lookups itself, so a test that "resolves" a name to 169.254.169.254 can
assert that no connection was even attempted.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from supercontext_lab.bundle import parse_context_bundle
from supercontext_lab.config import config_path, set_setting
from supercontext_lab.errors import ConfigError, ModelError, WorkspaceError
from supercontext_lab.gate import ColdStartReason
from supercontext_lab.harness import TurnResult
from supercontext_lab.models.base import Message
from supercontext_lab.models.openai import OpenAICompatibleModel
from supercontext_lab.routes import ModelRoute, get_model_route
from supercontext_lab.sources.workspace import Workspace
from supercontext_lab.testing import (
    OpenAITestServer,
    ScriptedModel,
    ScriptedResponse,
    envelope,
    tool_call_message,
)
from supercontext_lab.tools import build_scout_registry, web

from .support import (
    CANARY_KEY,
    KEY_ENV,
    ORCHESTRATOR_REPLY,
    REDIRECT_TARGETS,
    NetworkGuard,
    PageServer,
    Sandbox,
    assert_no_canary,
    fill,
    run_turn,
    shown_texts,
    write,
)

PAGE = "<html><body><p>A public page.</p></body></html>"


@pytest.fixture
def site(shared_site: PageServer) -> PageServer:
    """The suite's loopback site with one page. Made-up host names resolve through the
    network guard (see ``support.TEST_HOSTS``)."""
    shared_site.routes.clear()
    shared_site.seen.clear()
    shared_site.page("/page", PAGE)
    return shared_site


# ---------------------------------------------------------------------- web_fetch policy

REFUSED_BY_DEFAULT = [
    ("{site}/page", "loopback"),
    ("http://127.8.9.10:{port}/page", "loopback"),
    ("http://localhost:{port}/page", "loopback"),
    ("http://LOCALHOST.:{port}/page", "loopback"),
    ("http://[::1]:{port}/page", "loopback"),
    ("http://[::1%25lo]:{port}/page", "loopback"),
    ("http://[::ffff:127.0.0.1]:{port}/page", "loopback"),
    ("http://[0:0:0:0:0:ffff:7f00:1]:{port}/page", "loopback"),
    ("http://2130706433:{port}/page", "loopback"),
    ("http://0x7f000001:{port}/page", "loopback"),
    ("http://0177.0.0.1:{port}/page", "not a valid URL"),
    ("http://127.1:{port}/page", "loopback"),
    ("http://v6-loop.test:{port}/page", "loopback"),
    ("http://0.0.0.0:{port}/page", "unspecified"),
    ("http://0:{port}/page", "unspecified"),
    ("http://[::]:{port}/page", "unspecified"),
    ("http://10.0.0.1/", "private"),
    ("http://172.16.0.1/", "private"),
    ("http://192.168.1.1/", "private"),
    ("http://100.64.0.1/", "private"),
    ("http://[fd12:3456::1]/", "private"),
    ("http://[::ffff:10.0.0.1]/", "private"),
    ("http://intranet.corp/", "private"),
    ("http://mixed.test/", "private"),
    ("http://169.254.1.1/", "link-local"),
    ("http://[fe80::1]/", "link-local"),
    ("http://169.254.169.254/latest/meta-data/", "metadata"),
    ("HTTP://169.254.169.254/latest/meta-data/", "metadata"),
    ("http://2852039166/latest/meta-data/", "metadata"),
    ("http://0xa9fea9fe/latest/meta-data/", "metadata"),
    ("http://[::ffff:169.254.169.254]/", "metadata"),
    ("http://[fd00:ec2::254]/", "metadata"),
    ("http://169.254.170.2/v2/credentials", "metadata"),
    ("http://100.100.100.200/", "metadata"),
    ("http://168.63.129.16/", "metadata"),
    ("http://metadata.google.internal/computeMetadata/v1/", "metadata"),
    ("http://imds.test/", "metadata"),
    ("http://169.254.169.254.nip.io/", "metadata"),
    ("http://169.254.169.254#@public.test/", "metadata"),
    ("http://224.0.0.1/", "multicast"),
    ("http://255.255.255.255/", "reserved"),
    ("http://192.0.2.1/", "reserved"),
    ("file:///etc/passwd", "not scheme 'file'"),
    ("ftp://127.0.0.1/x", "not scheme 'ftp'"),
    ("gopher://127.0.0.1:70/_", "not scheme 'gopher'"),
    ("data:text/html,<script>alert(1)</script>", "not scheme 'data'"),
    ("javascript:alert(1)", "not scheme 'javascript'"),
    ("//169.254.169.254/x", "not scheme 'none'"),
    ("http://public.test@169.254.169.254/", "user name or password"),
    ("http://user:pw@public.test/", "user name or password"),
    ("http:/\\169.254.169.254", "no host name"),
    ("http://unknown-host.invalid/", "cannot resolve host"),
]


@pytest.mark.parametrize(("template", "reason"), REFUSED_BY_DEFAULT)
def test_web_fetch_refuses_before_connecting(
    template: str, reason: str, site: PageServer, network_guard: NetworkGuard
) -> None:
    """web_fetch targets: loopback, private, link-local, metadata, odd IP encodings, bad schemes."""
    result = web.fetch_url(fill(template, site), allow_private_addresses=False, timeout=3)
    assert not result.ok
    assert reason in result.content
    assert network_guard.connects == []
    assert site.seen == []


METADATA = [
    "http://169.254.169.254/latest/meta-data/iam/",
    "http://2852039166/latest/meta-data/",
    "http://[::ffff:169.254.169.254]/",
    "http://[fd00:ec2::254]/latest/meta-data/",
    "http://169.254.170.2/v2/credentials",
    "http://100.100.100.200/latest/meta-data/",
    "http://168.63.129.16/machine",
    "http://metadata.google.internal/computeMetadata/v1/",
    "http://METADATA.goog./x",
    "http://imds.test/latest/",
]


@pytest.mark.parametrize("url", METADATA)
def test_metadata_stays_refused_when_private_addresses_are_allowed(
    url: str, site: PageServer, network_guard: NetworkGuard
) -> None:
    """Cloud metadata stays refused when private addresses are allowed.

    Allowing private addresses (for an intranet page) never opens cloud credentials."""
    result = web.fetch_url(url, allow_private_addresses=True, timeout=3)
    assert not result.ok
    assert "metadata" in result.content
    assert network_guard.connects == []


@pytest.mark.parametrize(("target", "reason"), REDIRECT_TARGETS)
@pytest.mark.parametrize("status", [301, 302, 307, 308])
def test_redirect_is_refused_before_any_connection(
    target: str,
    reason: str,
    status: int,
    site: PageServer,
    network_guard: NetworkGuard,
    loopback_is_public: None,
) -> None:
    """A 127.0.0.1 page redirecting (301/302/307/308, over two hops) to a refused target."""
    site.redirect("/jump", fill(target, site), status)
    start = site.redirect("/start", "/jump", status)
    result = web.fetch_url(start, allow_private_addresses=False, timeout=3)
    assert not result.ok
    assert reason in result.content
    assert site.seen == ["/start", "/jump"]
    assert network_guard.connects == ["127.0.0.1", "127.0.0.1"]


def test_hostile_scout_web_fetches_are_refused_in_a_turn(
    sandbox: Sandbox, site: PageServer, network_guard: NetworkGuard
) -> None:
    """A scout fetching every refused URL inside a turn."""
    urls = [fill(template, site) for template, _ in REFUSED_BY_DEFAULT]
    scout = ScriptedModel(
        [
            tool_call_message(*[("web_fetch", {"url": url}) for url in urls]),
            envelope(summary="Missing: every page; none could be fetched."),
        ]
    )
    before = sandbox.fingerprint()
    turn = run_turn(sandbox.root, scout)
    assert turn.result.prepared, turn.result.reason
    fetches = [step for step in turn.result.trace if step.tool == "web_fetch"]
    assert len(fetches) == len(urls)
    assert not any(step.ok for step in fetches)
    assert network_guard.connects == []
    assert site.seen == []
    assert sandbox.fingerprint() == before


# ---------------------------------------------------------------------- files/ confinement

ESCAPES = [
    ("../PROFILE.md", "'..' is not allowed"),
    ("../../outside/secret.txt", "'..' is not allowed"),
    ("budget/../../PROFILE.md", "'..' is not allowed"),
    ("budget\\..\\..\\PROFILE.md", "'..' is not allowed"),
    ("/etc/passwd", "absolute path"),
    ("\\etc\\passwd", "absolute path"),
    ("C:\\Windows\\win.ini", "absolute path"),
    ("C:relative.txt", "absolute path"),
    ("\\\\server\\share\\x.txt", "absolute path"),
    ("escape.txt", "outside files/"),
    ("outside-dir/secret.txt", "outside files/"),
    ("up/PROFILE.md", "outside files/"),
    ("up/files/../PROFILE.md", "'..' is not allowed"),
    ("loop-a", "cannot be resolved"),
    ("budget/self", "cannot be resolved"),
    ("nul\x00byte.md", "cannot be resolved"),
    ("", "give a path inside files/"),
    ("   ", "give a path inside files/"),
    (".", "is not a file"),
    ("budget", "is not a file"),
    ("missing.md", "does not exist"),
    ("binary.bin", "binary file"),
]


@pytest.mark.parametrize(("rel", "reason"), ESCAPES)
def test_reads_stay_inside_files(rel: str, reason: str, sandbox: Sandbox) -> None:
    """Reads trying to leave files/: .., absolute paths, symlinks, loops, NUL."""
    workspace = Workspace(sandbox.root)
    with pytest.raises(WorkspaceError) as caught:
        workspace.read_file(rel)
    assert reason in str(caught.value)
    assert "OUTSIDE-SECRET" not in str(caught.value)
    tool = build_scout_registry(workspace).call("workspace_read_file", {"path": rel})
    assert not tool.ok
    assert "OUTSIDE-SECRET" not in tool.content


def test_listing_skips_every_escape_and_loop(sandbox: Sandbox) -> None:
    """Listing files/ with escaping symlinks and loops."""
    listed = Workspace(sandbox.root).list_files()
    assert listed == [
        "[context_bundle] notes.md",
        "binary.bin",
        "budget/grant-budget-2026.md",
        "latin1.txt",
    ]


def test_files_folder_linked_outside_is_refused_and_the_turn_goes_on(sandbox: Sandbox) -> None:
    """files/ itself linked outside the workspace."""
    files = sandbox.root / "files"
    files.rename(sandbox.base / "old-files")
    files.symlink_to(sandbox.outside, target_is_directory=True)
    workspace = Workspace(sandbox.root)
    with pytest.raises(WorkspaceError, match="points outside the workspace"):
        workspace.read_file("secret.txt")
    with pytest.raises(WorkspaceError, match="points outside the workspace"):
        workspace.list_files()
    before = sandbox.fingerprint()
    turn = run_turn(sandbox.root, None)
    assert turn.result.reply == ORCHESTRATOR_REPLY
    assert turn.result.preparation == "failed"
    assert "points outside the workspace" in (turn.result.reason_detail or "")
    assert sandbox.fingerprint() == before


def test_index_folder_linked_outside_is_never_written(sandbox: Sandbox) -> None:
    """.supercontext/ linked outside the workspace.

    A workspace whose .supercontext/ is a symlink must not make the lab write (or
    delete damaged index files) in the folder it points to."""
    elsewhere = sandbox.base / "elsewhere"
    write(elsewhere / "memory.sqlite3", b"not a database, but somebody's file")
    (sandbox.root / ".supercontext").symlink_to(elsewhere, target_is_directory=True)
    before = sandbox.fingerprint()
    turn = run_turn(sandbox.root, None)
    assert turn.result.reply == ORCHESTRATOR_REPLY
    recalls = [step for step in turn.result.trace if step.tool == "memory_recall"]
    assert recalls
    assert all(not step.ok and ".supercontext" in step.result_preview for step in recalls)
    assert sandbox.fingerprint() == before
    assert (elsewhere / "memory.sqlite3").read_bytes() == b"not a database, but somebody's file"


# ---------------------------------------------------------------------- the API key

ECHOES = [
    ("401-body", [ScriptedResponse.error(401, f"invalid api key {CANARY_KEY}")]),
    ("500-bodies", [ScriptedResponse.error(500, f"upstream said Bearer {CANARY_KEY}")] * 4),
    ("html-body", [ScriptedResponse(body=f"<p>{CANARY_KEY}</p>", headers={"Content-Type": "text/html"})]),
    ("wrong-shape", [ScriptedResponse(json={"error": {"message": f"key {CANARY_KEY} revoked"}})]),
    ("stream-chunk", [ScriptedResponse(sse=[f"data: {{bad {CANARY_KEY}"])]),
    ("stream-error", [ScriptedResponse(sse=[json.dumps({"error": {"message": CANARY_KEY}}).join(["data: ", ""])])]),
    ("redirect", [ScriptedResponse(status=307, headers={"Location": f"http://u:{CANARY_KEY}@127.0.0.1:9/v1"})]),
]  # fmt: skip


@pytest.mark.parametrize(("case", "responses"), ECHOES)
def test_a_server_echoing_the_key_cannot_leak_it(
    case: str,
    responses: list[ScriptedResponse],
    sandbox: Sandbox,
    canary_key: str,
    caplog: pytest.LogCaptureFixture,
    tmp_path: Path,
) -> None:
    """A server echoing the API key in error bodies, streams and headers."""
    caplog.set_level("DEBUG")
    with OpenAITestServer(responses) as server:
        model = OpenAICompatibleModel(
            base_url=server.base_url,
            model="m",
            api_key_env=KEY_ENV,
            timeout_s=2,
            stream=case.startswith("stream"),
            sleep=lambda seconds: None,
        )
        turn = run_turn(sandbox.root, model)
        server.enqueue(*responses)
        with pytest.raises(ModelError) as caught:
            model.complete([Message("user", "hi")], timeout=5)
        model.close()
        assert server.requests[0].headers["Authorization"] == f"Bearer {CANARY_KEY}"
    assert turn.result.preparation == "failed"
    saved = turn.thread.save(tmp_path / "thread.json").read_text(encoding="utf-8")
    # httpcore's own DEBUG trace prints the response headers the server sent, echo
    # included; every record of the lab and of httpx must stay clean.
    logs = [r.getMessage() for r in caplog.records if not r.name.startswith("httpcore")]
    errors = [text for exc in _chain(caught.value) for text in (str(exc), repr(exc))]
    assert_no_canary([*shown_texts(turn), *logs, saved, *errors])


def _chain(exc: BaseException | None) -> list[BaseException]:
    """The exception and every cause or context behind it (what a traceback prints)."""
    seen: list[BaseException] = []
    while exc is not None and exc not in seen:
        seen.append(exc)
        if exc.__cause__ is not None:
            exc = exc.__cause__
        else:
            exc = None if exc.__suppress_context__ else exc.__context__
    return seen


def test_a_key_in_the_base_url_is_never_shown(canary_key: str) -> None:
    """A key in the base URL's user info."""
    url = f"http://user:{CANARY_KEY}@127.0.0.1:9/v1"
    model = OpenAICompatibleModel(base_url=url, model="m", timeout_s=0.5, max_retries=0)
    with model, pytest.raises(ModelError) as caught:
        model.complete([Message("user", "hi")])
    assert_no_canary([repr(model), *[str(exc) for exc in _chain(caught.value)]])


def test_a_key_pasted_as_the_variable_name_is_never_echoed(canary_key: str) -> None:
    """A key pasted where its variable's name belongs."""
    config_path().parent.mkdir(parents=True, exist_ok=True)
    config_path().write_text(
        f'[models.burst]\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n'
        f'model = "m"\napi_key_env = "{CANARY_KEY}"\n',
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as from_file:
        get_model_route("burst")
    with pytest.raises(ValueError, match="NAME of an environment variable") as built:
        ModelRoute(
            kind="openai", base_url="http://127.0.0.1:9/v1", model="m", api_key_env=CANARY_KEY
        )
    assert "NAME of an environment variable" in str(from_file.value)
    assert_no_canary([str(from_file.value), repr(from_file.value), str(built.value)])


# ---------------------------------------------------------------------- HTML

SCRIPT = "<script>alert('pwned')</script>"


def _hostile_bundle_text() -> str:
    return envelope(
        has_enough_context=True,
        proposed_goal=f"Goal {SCRIPT}",
        summary=f"Summary {SCRIPT}\n<img src=x onerror=alert(1)> & [link](javascript:alert(1))",
        recommended_tool_calls=[(f"shell{SCRIPT}", {"cmd": SCRIPT}, f"why {SCRIPT}")],
        recommended_skills=[(f"skill{SCRIPT}", True, f"why {SCRIPT}")],
    )


def test_bundle_markdown_escapes_untrusted_markup() -> None:
    """Bundle markdown with a script, an onerror image and a javascript: link."""
    bundle = parse_context_bundle(_hostile_bundle_text())
    assert bundle is not None
    markdown = bundle._repr_mimebundle_()["text/markdown"]
    assert "<" not in markdown
    assert ">" not in markdown
    assert "](javascript" not in markdown
    assert "&lt;script&gt;" in markdown


def test_turn_result_html_escapes_untrusted_markup(sandbox: Sandbox) -> None:
    """TurnResult HTML with a script in the message, the bundle and the reply."""
    scout = ScriptedModel([_hostile_bundle_text()])
    turn = run_turn(sandbox.root, scout, message=f"Help me with the grant budget {SCRIPT}")
    turn.result.reply = f"reply {SCRIPT}"
    html = turn.result._repr_mimebundle_()["text/html"]
    assert re.sub(r"</?pre>", "", html).count("<") == 0
    assert "&lt;script&gt;" in html


@settings(max_examples=150, deadline=None, database=None)
@given(st.text(), st.text(), st.text())
def test_any_untrusted_text_stays_escaped(summary: str, goal: str, reply: str) -> None:
    """Any text in TurnResult HTML and bundle markdown stays escaped."""
    bundle = parse_context_bundle(
        f"[context_bundle]\nproposed_goal: {goal}\nsummary: {summary}\n[/context_bundle]"
    )
    if bundle is not None:
        markdown = bundle._repr_mimebundle_()["text/markdown"]
        assert "<" not in markdown
        assert ">" not in markdown
    result = TurnResult(
        message=summary,
        sent_message=summary,
        reply=reply,
        preparation="failed",
        reason=ColdStartReason.NO_ENVELOPE,
        reason_detail=goal,
        first_turn=True,
        bundle=bundle,
        goal=goal,
        orchestrator_error=summary,
    )
    html = result._repr_mimebundle_()["text/html"]
    assert html.startswith("<pre>")
    assert html.endswith("</pre>")
    assert "<" not in html[5:-6]


def test_web_fetch_of_an_allowed_private_page_returns_text_only(
    site: PageServer, network_guard: NetworkGuard
) -> None:
    """An allowed loopback page comes back as text, its script dropped.

    With private addresses allowed in config, a loopback page is fetched as plain text:
    its script is dropped, never executed or passed on as markup."""
    set_setting("web.allow_private_addresses", True)
    url = site.page("/script", f"<html><body><p>Budget</p>{SCRIPT}</body></html>")
    result = web.fetch_url(url, timeout=3)
    assert result.ok, result.content
    text = json.loads(result.content)["text"]
    assert text == "Budget"
    assert network_guard.connects == ["127.0.0.1"]
