"""An evaluation dataset is somebody else's file: it may name only the workspaces it is
allowed to, its text may hold anything JSON can, and the file may not be a file at all.

The evaluation walks each workspace a case names and writes its memory index there, so a
line naming ``/`` or a home folder must be refused before anything is read or written.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from supercontext_lab.errors import DatasetError
from supercontext_lab.eval import evaluate, load_dataset, parse_dataset
from supercontext_lab.eval.clusters import case_clusters
from supercontext_lab.sources.demo import demo_workspace_path

from .support import assert_one_line_exit_2, run_cli, write

INDEX_DIR = ".supercontext"


def _case(**fields: object) -> str:
    return json.dumps({"id": "c", "message": "What did we decide about the budget?", **fields})


@pytest.fixture
def layout(tmp_path: Path) -> dict[str, Path]:
    """A dataset folder with a workspace below it, and a folder beside it."""
    data = tmp_path / "data"
    write(data / "ws" / "memory" / "global" / "budget.md", "The budget is capped at 250k.\n")
    write(tmp_path / "beside" / "PROFILE.md", "# Somebody else\n")
    (data / "escape").symlink_to("/", target_is_directory=True)
    return {"data": data, "below": data / "ws", "beside": tmp_path / "beside"}


REFUSED = {
    "the-root-folder": "/",
    "the-home-folder": "~",
    "a-folder-beside-the-dataset": "../beside",
    "a-link-below-leading-to-root": "escape",
    "dot-dot-out-of-a-folder-below": "ws/../../beside",
}


@pytest.mark.parametrize("workspace", list(REFUSED.values()), ids=list(REFUSED))
def test_a_dataset_naming_a_folder_it_may_not_is_refused(
    workspace: str, layout: dict[str, Path]
) -> None:
    """A dataset line naming /, ~, a folder beside it or a link out: one line, nothing written

    The DatasetError names the line and the folder; nothing is read or written there."""
    dataset = write(
        layout["data"] / "cases.jsonl", _case(id="ok") + "\n" + _case(workspace=workspace) + "\n"
    )
    with pytest.raises(DatasetError) as caught:
        load_dataset(dataset)
    message = str(caught.value)
    assert "line 2" in message and "refused" in message and "\n" not in message
    with pytest.raises(DatasetError, match="line 2"):
        evaluate(dataset, progress=False, cache=False)
    assert not (layout["beside"] / INDEX_DIR).exists()


def test_the_cli_refuses_a_dataset_naming_root_with_one_line(layout: dict[str, Path]) -> None:
    """eval of a dataset naming /: one line naming the line and the folder, exit 2"""
    dataset = write(layout["data"] / "cases.jsonl", _case(workspace="/") + "\n")
    assert_one_line_exit_2(run_cli("eval", "--dataset", str(dataset)), "line 1", '"/"')


def test_allowed_workspaces_are_the_named_ones_below_and_the_demo(layout: dict[str, Path]) -> None:
    """Folders below the dataset, the shipped demo and --workspace folders are allowed"""
    lines = [
        _case(id="below", workspace="ws"),
        _case(id="demo", workspace=str(demo_workspace_path())),
        _case(id="beside", workspace=str(layout["beside"])),
    ]
    dataset = write(layout["data"] / "cases.jsonl", "\n".join(lines) + "\n")
    with pytest.raises(DatasetError, match="line 3"):
        load_dataset(dataset)
    cases = load_dataset(dataset, allowed_workspaces=[layout["beside"]])
    assert [c.workspace for c in cases] == [
        layout["below"].resolve(),
        demo_workspace_path().resolve(),
        layout["beside"].resolve(),
    ]
    done = run_cli(
        "eval",
        "--dataset",
        str(dataset),
        "--workspace",
        str(layout["beside"]),
        "--no-cache",
        "--json",
    )
    assert done.returncode == 0, done.stderr
    assert {c["id"] for c in json.loads(done.stdout)["cases"]} == {"below", "demo", "beside"}


def test_evaluate_allows_the_workspace_it_is_given(layout: dict[str, Path]) -> None:
    """evaluate(dataset, workspace=W): a line naming W is allowed, as W was named"""
    dataset = write(layout["data"] / "cases.jsonl", _case(workspace=str(layout["beside"])) + "\n")
    report = evaluate(dataset, progress=False, cache=False, workspace=layout["beside"])
    assert report.results[0].workspace == str(layout["beside"].resolve())


def test_parsed_text_without_a_folder_may_name_only_allowed_workspaces(tmp_path: Path) -> None:
    """parse_dataset of text with no folder of its own: only allowed folders and the demo"""
    with pytest.raises(DatasetError, match="refused"):
        parse_dataset(_case(workspace=str(tmp_path)))
    (case,) = parse_dataset(_case(workspace=str(tmp_path)), allowed_workspaces=[tmp_path])
    assert case.workspace == tmp_path.resolve()


# ---------------------------------------------------------------------- the text of a dataset


@pytest.mark.parametrize(
    "line",
    [
        '{"id": "a\\ud800", "message": "budget \\udc00 plan"}',
        '{"id": "a", "message": "m", "expect": {"mentions": ["\\ud83d"]}}',
        '{"id": "a", "message": "m", "focus": "\\udfff"}',
        '{"id": "a", "message": "m", "cluster": "\\ud800x"}',
    ],
    ids=["id-and-message", "expectation", "focus", "cluster"],
)
def test_lone_surrogates_in_a_dataset_read_as_replacement_characters(
    line: str, tmp_path: Path
) -> None:
    """A dataset line holding "\\ud800" (a JSON escape): read as U+FFFD; eval runs"""
    dataset = write(tmp_path / "cases.jsonl", line + "\n")
    (case,) = load_dataset(dataset)
    json.dumps(case.to_dict(), ensure_ascii=False).encode("utf-8")  # no surrogate left
    done = run_cli("eval", "--dataset", str(dataset), "--no-cache", "--json", input=b"")
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")[-2000:]
    json.loads(done.stdout.decode("utf-8"))


@pytest.mark.parametrize(
    "cluster",
    ['=HYPERLINK("http://example.invalid")', "a\nb\x1b[31mred\u202e", "x" * 500_000],
    ids=["a-formula", "control-characters", "half-a-megabyte"],
)
def test_a_cluster_name_groups_cases_and_is_printed_nowhere(cluster: str) -> None:
    """A case's "cluster" holding a formula, terminal escapes or 500,000 characters

    It only groups cases for the clustered standard errors: two clusters counted, and the
    name reaches no table, CSV, HTML or JSON of the report."""
    lines = [_case(id="a", cluster=cluster), _case(id="b", cluster=cluster)]
    lines.append(_case(id="c", cluster="other"))
    cases = parse_dataset("\n".join(lines))
    assert len(set(case_clusters(cases).values())) == 2
    report = evaluate(cases, progress=False, cache=False)
    shown = "".join(
        [
            report.to_text(),
            report.intervals_text(),
            report.to_html(),
            report.to_markdown(),
            report.to_csv(),
            report.to_csv(table="metrics"),
            report.to_json(),
        ]
    )
    assert cluster[:40] not in shown and "\x1b" not in shown


def test_a_line_of_two_million_characters_is_refused(tmp_path: Path) -> None:
    """A dataset line of 2,000,000 characters: one DatasetError naming the line"""
    dataset = write(
        tmp_path / "cases.jsonl", _case() + "\n" + _case(id="b", message="x" * 2_000_000) + "\n"
    )
    with pytest.raises(DatasetError, match="line 2: the line is 2,000,0"):
        load_dataset(dataset)


def test_a_nul_in_a_dataset_path_or_workspace_is_one_error(tmp_path: Path) -> None:
    """A NUL in a dataset's path or in a workspace it names: a DatasetError, no traceback"""
    with pytest.raises(DatasetError):
        load_dataset(str(tmp_path / "cases\x00.jsonl"))
    dataset = write(tmp_path / "cases.jsonl", _case(workspace="ws\u0000x") + "\n")
    with pytest.raises(DatasetError, match="line 1"):
        load_dataset(dataset)


# ---------------------------------------------------------------------- files that are not files


def test_a_dataset_that_is_a_fifo_is_refused_at_once(tmp_path: Path) -> None:
    """load_dataset of a FIFO: refused at once (never waits for a writer)"""
    fifo = tmp_path / "cases.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(DatasetError, match="not a regular file"):
        load_dataset(fifo)


def test_a_dataset_that_is_dev_zero_is_refused_at_once() -> None:
    """load_dataset("/dev/zero") and eval --dataset /dev/zero: refused at once"""
    with pytest.raises(DatasetError, match="not a regular file"):
        load_dataset("/dev/zero")
    assert_one_line_exit_2(
        run_cli("eval", "--dataset", "/dev/zero", timeout=30), "not a regular file"
    )


def test_a_dataset_of_100mb_is_refused(tmp_path: Path) -> None:
    """A 100 MB dataset file (sparse): refused as too large, without reading it whole"""
    big = tmp_path / "cases.jsonl"
    with big.open("wb") as handle:
        handle.truncate(100 << 20)
    with pytest.raises(DatasetError, match="larger than 64 MiB"):
        load_dataset(big)
