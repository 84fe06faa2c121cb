"""``supercontext-lab eval``: JSON and text output, variants, exit codes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from supercontext_lab.cli import main
from supercontext_lab.cli.eval import parse_agent_option
from supercontext_lab.eval import EvalCase, demo_variant_path
from supercontext_lab.eval.metrics import COUNT_NAMES, METRIC_NAMES

from .conftest import write_variant


@pytest.fixture
def dataset(tmp_path: Path, small_cases: list[EvalCase]) -> Path:
    path = tmp_path / "cases.jsonl"
    path.write_text(
        "\n".join(json.dumps(case.to_dict()) for case in small_cases) + "\n", encoding="utf-8"
    )
    return path


def test_json_output_has_the_documented_shape(
    dataset: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        ["eval", "--dataset", str(dataset), "--agent", f"bare={demo_variant_path()}", "--json"]
    )
    out = capsys.readouterr()
    assert code == 0
    assert out.err == ""
    data = json.loads(out.out)
    assert [v["name"] for v in data["variants"]] == ["baseline", "bare"]
    for variant in data["variants"]:
        assert set(METRIC_NAMES) | set(COUNT_NAMES) <= set(variant["metrics"])
    assert len(data["cases"]) == 12
    first = data["cases"][0]
    assert {"id", "variant", "envelope", "problems", "scores"} <= set(first)
    assert first["id"] == "kernel-decision" and first["variant"] == "baseline"
    assert {"valid", "mention_rate", "skill_precision"} <= set(first["scores"])
    base, bare = (v["metrics"]["mention_rate"] for v in data["variants"])
    assert base > bare


def test_model_variants_bring_the_no_model_baselines() -> None:
    from supercontext_lab.cli.eval import _variants

    names = [v.name for v in _variants([], ["ollama:qwen2.5"], baselines=True)]
    assert names == ["baseline", "ollama-qwen2.5", "rank", "random"]
    assert [v.name for v in _variants([], ["ollama:qwen2.5"], baselines=False)] == [
        "baseline",
        "ollama-qwen2.5",
    ]
    # The offline scout and a baseline alone run no model: nothing to compare with.
    assert [v.name for v in _variants([], ["baseline:rank"], baselines=True)] == [
        "baseline",
        "baseline-rank",
    ]


def test_the_baselines_run_beside_the_offline_scout(
    dataset: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "eval",
            "--dataset",
            str(dataset),
            "--model",
            "baseline:rank",
            "--model",
            "baseline:random",
            "--json",
        ]
    )
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    names = [v["name"] for v in data["variants"]]
    assert names == ["baseline", "baseline-rank", "baseline-random"]
    metrics = {v["name"]: v["metrics"] for v in data["variants"]}
    assert metrics["baseline-rank"]["valid_rate"] == 1.0
    assert metrics["baseline-rank"]["mention_rate"] >= metrics["baseline-random"]["mention_rate"]
    # Each rate comes with the counts behind it, and its value and interval follow them
    # (a rate of 0 of 0: SPEC's 1.0, 0.0 for forbidden mentions, and [0, 1]).
    for variant in data["variants"]:
        for name, (k, n) in variant["counts"].items():
            empty = 0.0 if name == "forbidden_mention_rate" else 1.0
            assert variant["metrics"][name] == pytest.approx(k / n if n else empty), name
            if not n:
                assert variant["intervals"][name] == [0.0, 1.0], name


def test_text_output_and_the_cache(dataset: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "--dataset", str(dataset), "--executor", "local"]) == 0
    first = capsys.readouterr().out
    assert first.startswith("Scout evaluation: 6 cases x 1 variants\n")
    assert "mention_rate" in first
    # The latency of one run, p50 and p95, as columns of their own table.
    latency = re.search(
        r"^latency\s+runs\s+p50 ms\s+p95 ms\n[- ]+\nbaseline\s+6\s+(\d+\.\d)\s+(\d+\.\d)$",
        first,
        re.MULTILINE,
    )
    assert latency is not None, first
    assert 0 < float(latency.group(1)) <= float(latency.group(2))
    ran = re.search(
        r"6 runs in [\d.]+ s \(local executor\): 6 ran the scout, 0 reused from the cache; "
        r"model replies: (\d+) from the model, 0 from the cache$",
        first,
        re.MULTILINE,
    )
    assert ran is not None and int(ran.group(1)) >= 6, first
    assert main(["eval", "--dataset", str(dataset), "--replay"]) == 0
    replayed = capsys.readouterr().out
    # A replay asks the model nothing: what ran again was served by the response cache.
    again = re.search(
        r"\(sequential executor, replaying the cache\): (\d) ran the scout, (\d) reused from "
        r"the cache; model replies: 0 from the model, [1-9]\d* from the cache$",
        replayed,
        re.MULTILINE,
    )
    assert again is not None, replayed
    assert int(again.group(1)) + int(again.group(2)) == 6
    assert main(["eval", "--dataset", str(dataset), "--no-cache", "--repeats", "2"]) == 0
    text = capsys.readouterr().out
    assert "x 2 repeats" in text
    assert "12 runs in" in text and "(sequential executor, cache off): 12 ran the scout" in text
    assert "0 from the cache" in text


def test_an_agent_named_after_its_folder(
    dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_variant(tmp_path / "no-skills", "list_workflows")
    assert main(["eval", "--dataset", str(dataset), "--agent", str(path), "--json"]) == 0
    names = [v["name"] for v in json.loads(capsys.readouterr().out)["variants"]]
    assert names == ["baseline", "no-skills"]


@pytest.mark.parametrize(
    ("option", "expected"),
    [
        ("v2=path/to/agent.toml", ("v2", Path("path/to/agent.toml"))),
        ("path/to/v3/agent.toml", ("v3", Path("path/to/v3/agent.toml"))),
        ("variants/fast.toml", ("fast", Path("variants/fast.toml"))),
        (" v4 = a.toml", ("v4", Path("a.toml"))),
    ],
)
def test_agent_options(option: str, expected: tuple[str, Path]) -> None:
    assert parse_agent_option(option) == expected


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--dataset", "/no/such.jsonl"], "dataset file not found"),
        (["--dataset", "{ds}", "--workspace", "/no/such/dir"], "workspace folder not found"),
        (["--dataset", "{ds}", "--agent", "/no/agent.toml"], "agent definition not found"),
        (["--dataset", "{ds}", "--agent", "baseline={variant}"], "shipped definition's"),
        (
            ["--dataset", "{ds}", "--agent", "a={variant}", "--agent", "a={variant}"],
            "used twice",
        ),
        (["--dataset", "{ds}", "--agent", "bad name={variant}"], "variant name"),
        (["--dataset", "{ds}", "--agent", "x="], "names no agent.toml"),
        (["--dataset", "{ds}", "--executor", "cloud"], "invalid choice"),
        (["--dataset", "{ds}", "--concurrency", "0"], "at least 1"),
        (["--dataset", "{ds}", "--repeats", "x"], "whole number"),
        (["--dataset", "{ds}", "--no-cache", "--replay"], "not allowed with"),
        (["--dataset", "{ds}", "--dask-address", "tcp://x:1"], "needs --executor dask"),
        (["--dataset", "{bad}"], 'bad.jsonl, line 1: "message" is missing'),
        (["--dataset", "{ds}", "--agent", "{broken}"], "unknown key"),
        (["--dataset", "{ds}", "--replay"], "No recorded response"),
        (["--dataset", "{ds}", "--model", "baseline:best"], "names no baseline"),
        (["--dataset", "{ds}", "--model", "qwen"], "no provider prefix"),
        ([], "required: --dataset"),
    ],
)
def test_bad_input_exits_2_with_one_line(
    args: list[str],
    needle: str,
    dataset: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a"}\n', encoding="utf-8")
    broken = tmp_path / "broken" / "agent.toml"
    broken.parent.mkdir()
    broken.write_text('id = "x"\nflavour = 1\n', encoding="utf-8")
    values = {"ds": dataset, "variant": demo_variant_path(), "bad": bad, "broken": broken}
    code = main(["eval", *(arg.format(**values) for arg in args)])
    out = capsys.readouterr()
    assert code == 2
    assert out.out == ""
    assert needle in out.err
    assert out.err.count("\n") == 1


def test_the_installed_command(dataset: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "supercontext_lab", "eval", "--dataset", str(dataset), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ),
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["variants"][0]["name"] == "baseline"


def test_importing_the_cli_stays_light() -> None:
    code = (
        "import sys, json, supercontext_lab.cli.commands as c; c._build_parser();"
        "print(json.dumps([m for m in ('dask', 'distributed', 'matplotlib', 'numpy', 'tqdm', "
        "'supercontext_lab.scout', 'supercontext_lab.eval.runner') if m in sys.modules]))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == []


def test_text_output_under_twenty_cases_says_what_the_intervals_mean(
    dataset: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["eval", "--dataset", str(dataset), "--no-cache"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    note = next(line for line in lines if line.startswith("Only 6 cases: "))
    # Under the results table, before the intervals.
    assert lines.index(note) < next(
        i for i, line in enumerate(lines) if line.startswith("95 % interval")
    )
    assert "20 or more cases" in note
