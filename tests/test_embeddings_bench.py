"""`opgen bench embeddings`: its baselines are ONNX Runtime as users run it (the fused standard
export and its dynamic int8 form), its JSON is alone on stdout, and opgen's stages are timed.

One small run (4 sentences, 1 round, no cold start) carries the command-level assertions; the
ONNX baseline it builds is cached (.opgen-cache/onnx/) like every opgen build.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from opgen.cli import app
from opgen.pipelines import bench, onnx_baseline

from .conftest import CHECKOUT

MINILM = "all-minilm-l6-v2"


@pytest.fixture(scope="module")
def small_run() -> tuple[dict, str]:
    # stdout and stderr apart: the document must be the only thing on stdout
    result = CliRunner().invoke(app, ["bench", "embeddings", "--engine", "opgen", "--engine", "onnxruntime-int8",
                                      "--engine", "sentence-transformers", "--rounds", "1", "--sentences", "4",
                                      "--no-cold-start", "--json", "--root", str(CHECKOUT)])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout), result.stderr


def test_json_is_the_only_thing_on_stdout_and_progress_goes_to_stderr(small_run) -> None:
    data, err = small_run
    assert set(data["engines"]) == {"opgen", "onnxruntime-int8", "sentence-transformers"}
    assert "bench embeddings [" in err  # a line per finished step when not a terminal
    for figures in data["engines"].values():
        assert set(figures["per_second"]) == {"1", "32"} and all(v > 0 for v in figures["per_second"].values())


def test_the_int8_baseline_is_the_fused_export_quantized(small_run) -> None:
    data, _ = small_run
    how = data["engines"]["onnxruntime-int8"]["how"]
    # the transformer optimizer fused attention and the residual LayerNorms: not a naive graph
    assert "Attention x6" in how and "SkipLayerNormalization x12" in how and "int8" in how, how
    cos = data["cosine_to_sentence_transformers"]
    assert 0.9 < cos["onnxruntime-int8"]["min"] < 0.9999, cos  # quantized: close, not equal
    assert cos["opgen"]["min"] > 0.9999, cos


def test_opgen_stage_breakdown_accounts_for_the_time(small_run) -> None:
    data, _ = small_run
    stages = data["engines"]["opgen"]["stages_ms_per_sentence"]
    assert set(stages) == {"1", "32"}
    for batch, row in stages.items():
        assert list(row) == [*bench.STAGES, "host"]
        # every stage ran (the clocks moved) and none is negative; no timing ratios (a shared machine)
        assert row["encoder"] > 0 and row["tokenize"] > 0 and min(row.values()) >= 0, (batch, row)


def test_float32_baseline_matches_the_pytorch_model() -> None:
    embed = onnx_baseline.embedder(MINILM, "float32", threads=1)
    reference = bench.st_engine(MINILM)
    texts = bench.sentences(5)
    got, want = embed(texts), reference(texts)
    assert np.min(np.sum(got * want, axis=1)) > 0.99999


def test_unknown_engine_and_precision_are_named() -> None:
    result = CliRunner().invoke(app, ["bench", "embeddings", "--engine", "onnx", "--no-cold-start",
                                      "--root", str(CHECKOUT)])
    assert result.exit_code == 1 and "unknown engine 'onnx'" in result.output
    with pytest.raises(Exception, match="unknown ONNX Runtime precision 'int4'"):
        onnx_baseline.build(MINILM, "int4")


def test_node_host_cold_start_is_measured_over_the_exported_pipeline() -> None:
    seconds, peak_mib = bench.node_cold_start(MINILM, CHECKOUT)
    # a real launch of node that loaded the library and the weights and embedded a sentence
    assert 0 < seconds < 60 and peak_mib > 20, (seconds, peak_mib)
