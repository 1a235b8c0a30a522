"""The run specification (kofs/pipeline/config.py): one schema for the command line, YAML configs,
config.resolved.yaml, the manifest and the Python API."""

from __future__ import annotations

import json

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from kofs.cli import main
from kofs.cli.rank import rank_cmd
from kofs.cli.run import run_cmd
from kofs.cli.sources import sources_cmd
from kofs.datasets.example import example_paths
from kofs.errors import InputError, ParameterError
from kofs.pipeline.config import (
    RunConfig,
    all_options,
    as_config,
    dump_config,
    read_run_config,
    with_overrides,
)
from kofs.pipeline.presets import DEFAULTS_VERSION, PRESETS


def test_every_option_is_a_click_option_of_rank_and_run_field_for_field():
    rank = {p.name: p for p in rank_cmd.params}
    run = {p.name: p for p in run_cmd.params}
    for name, (_section, o) in all_options().items():
        if name != "expression":
            assert name in rank, name
            assert o.flag in rank[name].opts
            assert rank[name].default is None  # defaults live in the library only
            assert (o.help or "x")[:20] in (rank[name].help or "")
        assert name in run, name
    assert set(rank) == set(all_options())  # EXPRESSION is the argument of kofs rank


def test_sources_lists_only_the_options_it_uses():
    names = {p.name for p in sources_cmd.params}
    assert {"go", "pathways", "labels", "lists", "method"} <= names
    assert not names & {"output", "aggregate", "top", "seed", "param"}


def test_defaults_are_declared_once():
    cfg = RunConfig()
    flat = cfg.to_mapping()
    for name, (_s, o) in all_options().items():
        assert flat[name] == o.dump(o.default), name
    assert flat["defaults"] == DEFAULTS_VERSION


NAMES = st.lists(
    st.sampled_from(["variance", "fisher", "laplacian", "spec-phi2"]),
    min_size=1,
    max_size=3,
    unique=True,
)


@given(
    seed=st.integers(0, 10**6),
    top=st.integers(0, 50),
    rankers=st.none() | NAMES,
    k=st.integers(1, 30),
    aspect=st.sampled_from(["BP", "MF", "CC"]),
    msfs=st.none() | st.lists(st.floats(0.1, 5, allow_nan=False), min_size=1, max_size=3),
)
def test_round_trip_through_config_resolved_yaml(
    tmp_path_factory, seed, top, rankers, k, aspect, msfs
):
    values = {
        "expression": "/data/x.tsv",
        "seed": seed,
        "top": top,
        "rankers": rankers,
        "param": [f"laplacian.k={k}"],
        "go_aspect": aspect,
        "msfs_weights": msfs,
        "aux": ["/data/a.tsv", "/data/b.tsv"],
        "output": "/data/out",
    }
    cfg = RunConfig.from_mapping(values)
    path = tmp_path_factory.mktemp("cfg") / "c.yaml"
    path.write_text(dump_config(cfg))
    assert read_run_config(path) == cfg


def test_yaml_lists_mappings_and_text_mean_the_same(tmp_path):
    a = RunConfig.from_mapping({"rankers": "fisher,variance", "param": ["laplacian.k=10"]})
    b = RunConfig.from_mapping(
        {"rankers": ["fisher", "variance"], "param": {"laplacian": {"k": "10"}}}
    )
    c = RunConfig.from_mapping({"rankers": ["fisher, variance"], "param": {"laplacian.k": "10"}})
    assert a == b == c


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("expression: x.tsv\nseed: 1\nseed: 2\n", "given twice"),
        ("expression: x.tsv\nseed: 1\n'seed': 2\n", "given twice"),
        ("expression: x.tsv\nlabel-column: a\nlabel_column: b\n", "given twice"),
        ("expression: x.tsv\nrankrs: fisher\n", "did you mean 'rankers'"),
        ("expression: x.tsv\nseed: [1, 2]\n", "expected a single value"),
        ("expression: x.tsv\nthreads: 1.5\n", "expected an integer"),
        ("expression: x.tsv\nthreads: true\n", "expected a number"),
        ("expression: x.tsv\nlabels: {x: 1}\n", "expected a file path"),
        ("expression: x.tsv\ndefaults: '99'\n", "defaults version '99'"),
        ("expression: x.tsv\naggregate: emm\n", "did you mean 'em'"),
        # an unknown ranker named neither the config nor the key, once the matrix was read
        ("expression: x.tsv\nrankers: fisher,fishr\n", "--rankers: unknown ranker 'fishr'"),
        ("expression: x.tsv\nrankers: 5\n", "--rankers: unknown ranker '5'"),
        ("expression: x.tsv\ngo-aspect: XX\n", "not one of BP, MF, CC"),
        ("expression: !!python/object:os.system x\n", "tags are not allowed"),
        # complex keys were an internal error (unhashable list)
        ("expression: x.tsv\n? [a, b]\n: 2\n", "c.yaml:2: a key is a list; keys are names"),
        ("expression: x.tsv\nparam:\n  {a: 1}: 2\n", "c.yaml:3: a key is a mapping"),
        ("expression: x.tsv\ntitle: caf\xe9\n", r"c.yaml:2: is not UTF-8 text \(byte 0xe9\)"),
        ("expression: x.tsv\ntitle: caf\u20ac\n", r"c.yaml:2: is not UTF-8 text \(byte 0x80\)"),
    ],
)
def test_bad_configs_are_one_clear_error(tmp_path, text, needle):
    path = tmp_path / "c.yaml"
    path.write_bytes(text.encode("cp1252" if "caf" in text else "utf-8"))
    with pytest.raises((InputError, ParameterError), match=needle) as exc:
        read_run_config(path)
    assert str(path) in str(exc.value) and "\n" not in str(exc.value)


def test_yaml_1_1_words_and_numbers_are_read_as_written(tmp_path):
    # PyYAML's safe_load (YAML 1.1) read 0123 as 83, KEGG's 04110 as 2120, seed 010 as 8,
    # 1:30 as 90 and `no` as false: a column, a pathway or a seed was silently another one
    path = tmp_path / "c.yaml"
    path.write_text(
        "expression: x.tsv\noutput: out\nlabel-column: 0123\nsample-column: no\npathway-ids: [04110, 05200]\n"
        "seed: 010\ntitle: 1:30\ngene-column: 2001-01-01\nno-report: off\nuse-raw: yes\n"
        "rankers: [fisher, variance]\nparam: {laplacian: {k: 010}}\nmsfs-weights: [0.5, 1.0e-3, 2]\n"
        "top: 0x10\n"
    )
    cfg = read_run_config(path)
    assert cfg.inputs.label_column == "0123" and cfg.inputs.sample_column == "no"
    assert cfg.knowledge["pathways"].pathway_ids == ("04110", "05200")
    assert cfg.resources.seed == 10 and cfg.output.title == "1:30"
    assert cfg.inputs.gene_column == "2001-01-01"
    assert cfg.output.no_report is False and cfg.inputs.use_raw is True
    assert cfg.ranking.rankers == ("fisher", "variance")
    word = tmp_path / "word.yaml"  # `on` is the word, refused as a ranker (not True)
    word.write_text("expression: x.tsv\nrankers: [fisher, on]\n")
    with pytest.raises(ParameterError, match="unknown ranker 'on'"):
        read_run_config(word)
    assert cfg.ranking.param == {"laplacian": {"k": 10}}  # the int the run coerces it to
    assert cfg.ranking.msfs_weights == (0.5, 0.001, 2.0)
    assert cfg.output.top == 16  # hexadecimal stays a number, as YAML 1.1 and 1.2 read it
    again = tmp_path / "again.yaml"  # config.resolved.yaml keeps them
    again.write_text(dump_config(cfg))
    assert read_run_config(again) == cfg


def test_a_key_without_a_value_is_a_key_not_given(tmp_path):
    # `top:` or `seed: null` set the option to None over its default: internal errors
    # ('<=' between None and int, int(None), None.items()) or "decimal=None is not one of"
    keys = ("top", "seed", "aggregate", "decimal", "missing-values", "param", "output", "rankers")
    path = tmp_path / "c.yaml"
    path.write_text("expression: x.tsv\n" + "".join(f"{k}:\n" for k in keys))
    cfg = read_run_config(path)
    plain = tmp_path / "plain.yaml"
    plain.write_text("expression: x.tsv\n")
    assert cfg == read_run_config(plain)
    # the defaults version's value, not the declared default: version 1 fuses with em
    old = RunConfig.from_mapping({"defaults": "1", "aggregate": None})
    assert old.aggregation.aggregate == PRESETS["1"]["aggregate"] == "em"


def test_relative_paths_are_relative_to_the_config(tmp_path):
    (tmp_path / "sub").mkdir()
    path = tmp_path / "sub" / "c.yaml"
    path.write_text("expression: ../x.tsv\naux: [a.tsv]\noutput: out\n")
    cfg = read_run_config(path)
    assert cfg.inputs.expression == str(tmp_path / "x.tsv")
    assert cfg.knowledge["aux"].aux == (str(tmp_path / "sub" / "a.tsv"),)
    assert cfg.output.output == str(tmp_path / "sub" / "out")


def test_a_configs_cache_dir_is_relative_to_the_config(tmp_path, monkeypatch):
    # `cache-dir: cache` was left relative, so the GO cache went to the folder kofs was run
    # from, and `~/c` made a folder named '~' there; it is no input of the run either
    (tmp_path / "sub").mkdir()
    path = tmp_path / "sub" / "c.yaml"
    path.write_text("expression: x.tsv\ncache-dir: cache\noutput: out\n")
    monkeypatch.chdir(tmp_path)
    cfg = read_run_config(path)
    assert cfg.resources.cache_dir == str(tmp_path / "sub" / "cache")
    assert "cache_dir" not in cfg.input_paths()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    path.write_text("expression: x.tsv\ncache-dir: ~/c\n")
    assert read_run_config(path).resources.cache_dir == str(tmp_path / "home" / "c")


def test_defaults_version_decides_the_default_plan(monkeypatch, tmp_path):
    monkeypatch.setitem(PRESETS, "test", {"default_plan": ("variance",)})
    p = example_paths()
    out = tmp_path / "o"
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"expression: {p['expression']}\ndefaults: test\noutput: {out}\n")
    r = CliRunner().invoke(main, ["run", str(cfg)])
    assert r.exit_code == 0, r.output
    manifest = json.loads((out / "manifest.json").read_text())
    assert [x["name"] for x in manifest["lists"]] == ["variance"]
    assert manifest["defaults_version"] == "test"
    assert yaml.safe_load((out / "config.resolved.yaml").read_text())["defaults"] == "test"


def test_python_api_runs_a_config(tmp_path):
    import kofs

    p = example_paths()
    cfg = kofs.RunConfig.from_mapping(
        {"expression": p["expression"], "rankers": ["variance"], "output": str(tmp_path / "o")}
    )
    result = kofs.run(cfg)
    assert result.config is cfg and [r.name for r in result.lists] == ["variance"]
    written = kofs.write_result(result)
    assert (tmp_path / "o" / "ranking.tsv").is_file() and len(written) >= 3


def test_run_overrides_config_values_from_the_command_line(tmp_path):
    p = example_paths()
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"expression: {p['expression']}\nrankers: variance\noutput: {tmp_path / 'a'}\n")
    r = CliRunner().invoke(
        main, ["run", str(cfg), "--rankers", "laplacian", "-o", str(tmp_path / "b")]
    )
    assert r.exit_code == 0, r.output
    m = json.loads((tmp_path / "b" / "manifest.json").read_text())
    assert [x["name"] for x in m["lists"]] == ["laplacian"] and not (tmp_path / "a").exists()


@pytest.mark.parametrize(
    ("param", "said"),
    [
        ("fisher.x=1", "config key 'param': ranker 'fisher' builds no list of this run"),
        ("nosuch.k=1", "config key 'param': unknown list or ranker 'nosuch'"),
        ("laplacian.k=abc", "ranker 'laplacian': parameter 'k' must be an int"),
    ],
)
def test_a_bad_value_of_a_config_names_the_config_and_its_key(tmp_path, param, said):
    # the error said "--param: ..." (an option the user never typed) and named no file
    cfg = tmp_path / "c.yaml"
    out = tmp_path / "out"
    cfg.write_text(
        f"expression: {example_paths()['expression']}\nrankers: laplacian\n"
        f"param: [{param}]\noutput: {out}\n"
    )
    r = CliRunner().invoke(main, ["run", str(cfg)])
    assert r.exit_code == 2 and not out.exists()
    assert r.output.startswith(f"kofs: error: {cfg}: ")
    assert said in r.output and "--param" not in r.output and len(r.output.splitlines()) == 1


def test_command_line_parameters_merge_into_the_configs(tmp_path):
    # `kofs run c.yaml --param laplacian.t=2` dropped the config's laplacian k=3 (and every
    # other ranker's parameters) without a word; the command line now changes only the keys
    # it names, in kofs run and in kofs.pipeline.config.as_config alike
    cfg = tmp_path / "c.yaml"
    cfg.write_text(
        "expression: x.tsv\nrankers: [laplacian, spec-phi2]\n"
        "param: {laplacian: {k: 3, t: 1}, spec-phi2: {k: 4}}\naggregate-param: {resamples: 50}\n"
    )
    got = as_config(cfg, param=["laplacian.t=2"], aggregate_param=["tol=1e-9"])
    assert got.ranking.param == {"laplacian": {"k": 3, "t": 2.0}, "spec-phi2": {"k": 4}}
    assert got.aggregation.aggregate_param == {"resamples": 50, "tol": "1e-9"}
    assert with_overrides({"param": {"a": {"k": 1}}}, {"param": None}) == {"param": None}
    run = tmp_path / "run.yaml"
    run.write_text(
        f"expression: {example_paths()['expression']}\nrankers: laplacian\n"
        "param: {laplacian: {k: 3}}\nno-report: true\n"
    )
    out = tmp_path / "out"
    r = CliRunner().invoke(main, ["run", str(run), "--param", "laplacian.t=2", "-o", str(out)])
    assert r.exit_code == 0, r.output
    resolved = yaml.safe_load((out / "config.resolved.yaml").read_text())
    assert resolved["param"] == {"laplacian": {"k": 3, "t": 2.0}}


def test_parameters_are_recorded_in_the_types_the_run_gives_them(tmp_path):
    # --param laplacian.k=7 was written to config.resolved.yaml (and the manifest's settings)
    # as the text '7': the record of the run did not say what ran in its own type
    ex = example_paths()
    out = tmp_path / "out"
    args = [
        "rank", ex["expression"], "--labels", ex["labels"], "--rankers", "laplacian,fisher",
        "--param", "laplacian.k=7", "--param", "laplacian.t=2.5",
        "--param", "laplacian.weight=binary", "--aggregate-param", "resamples=50",
        "--aggregate-param", "envelope=off", "--no-report", "-o", str(out),
    ]  # fmt: skip
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    resolved = yaml.safe_load((out / "config.resolved.yaml").read_text())
    assert resolved["param"] == {"laplacian": {"k": 7, "t": 2.5, "weight": "binary"}}
    assert type(resolved["param"]["laplacian"]["t"]) is float
    assert resolved["aggregate-param"] == {"resamples": 50, "envelope": False}
    settings = json.loads((out / "manifest.json").read_text())["settings"]
    assert settings["params"] == {"laplacian": {"k": 7, "t": 2.5, "weight": "binary"}}
    # a list's name types its ranker's parameters; a value the run refuses is kept as given
    cfg = RunConfig.from_mapping(
        {"param": ["GO-MAH.power=4", "MSFS.delta=3", "PPI-PROP.average=yes", "laplacian.k=x",
                   "user-list.k=5"]}
    )  # fmt: skip
    assert cfg.ranking.param == {
        "GO-MAH": {"power": 4}, "MSFS": {"delta": 3.0}, "PPI-PROP": {"average": True},
        "laplacian": {"k": "x"}, "user-list": {"k": "5"},
    }  # fmt: skip
    # the resolved config repeats the run byte for byte
    again = tmp_path / "again.yaml"
    text = (out / "config.resolved.yaml").read_text()
    again.write_text(text.replace(str(out), str(tmp_path / "out2")))
    r = CliRunner().invoke(main, ["run", str(again)])
    assert r.exit_code == 0, r.output
    for name in ("ranking.tsv", "weights.tsv"):
        assert (out / name).read_bytes() == (tmp_path / "out2" / name).read_bytes()
    got = (tmp_path / "out2" / "config.resolved.yaml").read_text()
    assert got == text.replace(str(out), str(tmp_path / "out2"))


def test_presets_name_a_default_plan():
    for version, preset in PRESETS.items():
        assert preset["default_plan"], version
    assert DEFAULTS_VERSION in PRESETS


def test_default_plan_of_sparse_matrices_leaves_variance_out():
    """Defaults version 3: single-cell (sparse or chunked) matrices get the plan without
    variance; dense matrices and version 2 keep it."""
    import numpy as np
    import scipy.sparse as sp

    import kofs
    from kofs.pipeline.presets import default_plan

    assert "variance" not in default_plan("5", sparse=True)
    assert "variance" in default_plan("5") and "variance" in default_plan("1", sparse=True)
    rng = np.random.default_rng(0)
    X = rng.poisson(0.3, size=(60, 40)).astype(float)
    names = lambda res: [r.name for r in res.lists]  # noqa: E731
    assert "variance" not in names(kofs.rank(sp.csr_matrix(X), bootstrap=0))
    assert "variance" in names(kofs.rank(X, bootstrap=0))
    assert "variance" in names(kofs.rank(sp.csr_matrix(X), bootstrap=0, defaults="1"))


def test_retired_defaults_versions_say_why():
    """Versions 2-4 defaulted to the retired 'reliability' fusion: a config naming one is
    refused in one line that says what replaced it; version 5 fuses with 'posterior'."""
    import numpy as np

    import kofs
    from kofs.pipeline.config import RunConfig

    for version in ("2", "3", "4"):
        with pytest.raises(ParameterError, match="retired.*posterior"):
            RunConfig.from_mapping({"defaults": version, "expression": "x.tsv"})
    X = np.random.default_rng(0).normal(size=(30, 80))
    assert kofs.rank(X, bootstrap=0).final.method == "posterior"
    assert kofs.rank(X, bootstrap=0, defaults="1").final.method == "em"


def test_run_a_config_whose_output_key_has_no_value(tmp_path, monkeypatch):
    # `output:` was an internal error (Path(None)); it is the default folder, never replaced
    monkeypatch.chdir(tmp_path)
    cfg = tmp_path / "c.yaml"
    cfg.write_text(
        f"expression: {example_paths()['expression']}\nrankers: variance\noutput:\ntop:\n"
    )
    r = CliRunner().invoke(main, ["run", str(cfg)])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "kofs-out" / "ranking.tsv").is_file()
    r = CliRunner().invoke(main, ["run", str(cfg)])
    assert r.exit_code == 2 and "kofs-out" in r.stderr and "\n" not in r.stderr.strip()
