# SPDX-License-Identifier: MIT
"""The built-once handles (Index on canopy_index, Predictor on canopy_predictor) and
paircount against brute-force NumPy and scipy; their files, closed handles and corrupt
files must raise with the library's message, never crash; the README's Python examples
run as written."""
import os
import re
import threading

import numpy as np
import pytest

import canopy

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
FOREST = os.path.join(ROOT, "tests", "data", "forest")
SEEDS = [1, 2, 3]


def brute_d2_f32(a, b, box=0.0):
    """Squared distances computed as the library does: float32, axis by axis in order,
    minimum image in a periodic box."""
    a = np.asarray(a, dtype=np.float32)
    b = np.asarray(b, dtype=np.float32)
    s = np.zeros((a.shape[0], b.shape[0]), dtype=np.float32)
    for j in range(a.shape[1]):
        x = np.abs(a[:, j, None] - b[None, :, j])
        if box > 0:
            x = np.minimum(np.float32(box) - x, x)
        s += x * x
    return s


def test_index_is_built_once_and_queried_many_times():
    rng = np.random.default_rng(4)
    ref = rng.random((3000, 3))
    ix = canopy.Index(ref, tree="kd", leaf_size=16)
    for _ in range(3):
        ix.query(rng.random((50, 3)), k=4)
    ix.query_radius(rng.random((10, 3)), 0.05)
    ix.count_neighbors(rng.random((10, 3)), [0.01, 0.1])
    info = ix.info()
    assert info["builds"] == 1 and info["queries"] >= 6 and not info["mapped"]
    assert (info["tree"], info["n"], info["d"], info["leaf_size"]) == ("kd", 3000, 3, 16)
    assert info["residency"] == "host" and info["device_bytes"] == 0


@pytest.mark.parametrize("tree", ["kd", "ball", "vp"])
def test_save_and_load_give_the_same_answers(tmp_path, tree):
    spatial = pytest.importorskip("scipy.spatial")
    rng = np.random.default_rng(8)
    ref = rng.random((1500, 4)).astype(np.float32)
    q = rng.random((80, 4)).astype(np.float32)
    path = tmp_path / f"ref.{tree}.idx"
    built = canopy.Index(ref, tree=tree)
    built.save(path)
    loaded = canopy.Index.load(path)
    assert loaded.info()["mapped"] and loaded.info()["builds"] == 0
    assert (loaded.tree, loaded.n, loaded.d, loaded.data) == (tree, 1500, 4, None)
    kd, ki = spatial.cKDTree(ref).query(q, k=6)
    for ix in (built, loaded):
        d, i = ix.query(q, k=6)
        np.testing.assert_allclose(d, kd, rtol=1e-5, atol=1e-6)
        assert (i == ki).mean() > 0.99
        np.testing.assert_array_equal(ix.query_radius(q, 0.3, count_only=True),
                                      spatial.cKDTree(ref).query_ball_point(
                                          q, np.nextafter(np.float32(0.3), np.float32(1)),
                                          return_length=True))
    np.testing.assert_array_equal(loaded.query(q, k=6)[1], built.query(q, k=6)[1])
    assert loaded.count_neighbors(q, 0.2) == built.count_neighbors(q, 0.2)
    assert built.count_neighbors(built, 0.1) == spatial.cKDTree(ref).count_neighbors(
        spatial.cKDTree(ref), 0.1)
    with pytest.raises(ValueError, match="loaded from a file"):
        built.count_neighbors(loaded, 0.1)
    loaded.close()
    with pytest.raises(ValueError, match="backend"):
        canopy.Index.load(path, backend="tpu")


@pytest.mark.parametrize("seed", SEEDS)
def test_radius_queries_in_chunks_match_brute_force(seed, monkeypatch):
    # A tiny chunk makes query_radius split its kNN calls: the answer must not change.
    rng = np.random.default_rng(seed)
    ref = rng.random((700, 2))
    q = rng.random((90, 2))
    d2 = brute_d2_f32(q, ref)
    r = 0.12
    want = [np.flatnonzero(row <= np.float32(r) ** 2) for row in d2]
    ix = canopy.Index(ref)
    whole = ix.query_radius(q, r)
    monkeypatch.setattr(canopy, "_RADIUS_CHUNK", 50)
    chunked, dist = ix.query_radius(q, r, return_distance=True)
    for a, b, dd, w in zip(whole, chunked, dist, want):
        np.testing.assert_array_equal(a, b)
        assert sorted(a) == sorted(w) and (np.diff(dd) >= 0).all()


def test_octree_index_gravity_equals_the_function_and_answers_radius_counts():
    rng = np.random.default_rng(5)
    pos = rng.normal(size=(400, 3))
    m = rng.random(400) + 0.5
    ix = canopy.Index(pos, tree="oct", weights=m)
    np.testing.assert_allclose(ix.gravity(theta=0.3, softening=0.05),
                               canopy.gravity(pos, m, 0.3, 0.05), rtol=1e-4, atol=1e-5)
    counts = ix.query_radius(pos[:20], 0.5, count_only=True)
    np.testing.assert_array_equal(counts, (brute_d2_f32(pos[:20], pos) <= np.float32(0.25)).sum(1))
    with pytest.raises(ValueError, match="oct"):
        canopy.Index(pos[:, :2], tree="oct")
    with pytest.raises(canopy.CanopyError):
        ix.query(pos[:2], k=1)  # kNN is for kd, ball and vp
    with pytest.raises(ValueError, match="oct"):
        canopy.Index(pos, tree="kd", weights=m)


def test_bst_index_search_is_searchsorted():
    rng = np.random.default_rng(6)
    keys = np.sort(rng.random(1000).astype(np.float32))
    keys[100:110] = keys[100]  # duplicates: the first of them
    ix = canopy.Index(keys, tree="bst")
    x = np.concatenate([rng.random(500), keys[95:115], [-1.0, 2.0]]).astype(np.float32)
    np.testing.assert_array_equal(ix.search(x), np.searchsorted(keys, x, side="left"))
    assert ix.search(x.reshape(2, -1)).shape == (2, x.size // 2)
    with pytest.raises(ValueError, match="sorted"):
        canopy.Index(keys[::-1], tree="bst")
    with pytest.raises(canopy.CanopyError):
        canopy.Index(rng.random((10, 2)), tree="kd").search(x)


def test_residency_device_needs_a_gpu_or_gives_the_host_answers():
    rng = np.random.default_rng(2)
    ref, q = rng.random((500, 3)), rng.random((40, 3))
    try:
        ix = canopy.Index(ref, residency="device")
    except canopy.CanopyRuntimeError as e:
        assert "CUDA" in str(e)
    else:
        np.testing.assert_array_equal(ix.query(q, k=3)[1], canopy.Index(ref).query(q, k=3)[1])
    with pytest.raises(ValueError, match="residency"):
        canopy.Index(ref, residency="gpu")


def test_closed_handles_raise(tmp_path):
    ix = canopy.Index(np.random.rand(50, 3))
    with canopy.Index(np.random.rand(50, 3)) as other:
        pass
    assert other.closed
    ix.close()
    ix.close()  # twice is fine
    for call in (lambda: ix.query(np.zeros((1, 3))), lambda: ix.info(),
                 lambda: ix.save(tmp_path / "x.idx"), lambda: ix.count_neighbors([[0, 0, 0]], 1)):
        with pytest.raises(ValueError, match="closed"):
            call()
    p = canopy.Predictor.load(os.path.join(FOREST, "xgb_binary.json"))
    p.close()
    with pytest.raises(ValueError, match="closed"):
        p.predict(np.zeros((1, p.n_features)))


def test_close_waits_for_queries_in_flight():
    ref = np.random.default_rng(3).random((20000, 3))
    ix = canopy.Index(ref)
    errors, done = [], []
    first = threading.Event()

    def worker():
        try:
            while True:  # until the index is closed
                done.append(ix.query(ref[:500], k=4)[1].shape)
                first.set()
        except ValueError as e:
            errors.append(str(e))

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for t in threads:
        t.start()
    first.wait(60)
    ix.close()  # while the others query: they finish their call, then see it closed
    for t in threads:
        t.join()
    assert done and all(s == (500, 4) for s in done)
    assert len(errors) == 3 and all("closed" in e for e in errors)


def corrupt_copies(tmp_path, good, suffix, magic_msg="not a"):
    """(file, expected message) pairs: truncated, a flipped byte, another magic, empty."""
    data = good.read_bytes()
    cases = []
    for name, blob, msg in (("trunc", data[:len(data) // 2], "truncated"),
                            ("flip", data[:len(data) // 2] + bytes([data[len(data) // 2] ^ 0xFF])
                             + data[len(data) // 2 + 1:], "checksum|corrupt"),
                            ("magic", b"XXXXXXXX" + data[8:], magic_msg),
                            ("empty", b"", None)):
        f = tmp_path / f"{name}{suffix}"
        f.write_bytes(blob)
        cases.append((f, msg))
    return cases


def test_corrupt_index_files_raise_with_the_file_name(tmp_path):
    good = tmp_path / "good.idx"
    canopy.Index(np.random.rand(300, 3)).save(good)
    for f, msg in corrupt_copies(tmp_path, good, ".idx"):
        with pytest.raises(ValueError, match=msg) as e:
            canopy.Index.load(f)
        assert f.name in str(e.value)
    with pytest.raises(OSError, match="nope.idx"):
        canopy.Index.load(tmp_path / "nope.idx")
    with pytest.raises(OSError):
        canopy.Index(np.random.rand(10, 2)).save(tmp_path / "missing-dir" / "x.idx")
    assert not (tmp_path / "missing-dir").exists()
    with pytest.raises(TypeError):
        canopy.Index.load(3)


@pytest.mark.parametrize("name", ["xgb_binary", "xgb_multi", "lgb_multi", "sk_et_reg"])
def test_compiled_predictor_files(tmp_path, name):
    model = [f for f in os.listdir(FOREST) if f.startswith(name + ".")
             and f.endswith((".json", ".txt"))][0]
    X = np.load(os.path.join(FOREST, name + ".X.npy"))
    cpf = tmp_path / f"{name}.cpf"
    compiled = canopy.Predictor.compile(os.path.join(FOREST, model), cpf, layout="bf")
    loaded = canopy.Predictor.load(cpf)
    assert loaded.n_features == X.shape[1] and loaded.n_trees == compiled.n_trees
    for kind in ("prob", "raw"):
        want = np.load(os.path.join(FOREST, f"{name}.{kind}.npy"))
        for p in (compiled, loaded):
            np.testing.assert_allclose(p.predict(X, output=kind).reshape(want.shape), want,
                                       rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(loaded.predict(X, output="class"),
                                  compiled.predict(X, output="class"))
    assert loaded.predict(X[:0]).shape[0] == 0
    again = tmp_path / "again.cpf"
    canopy.Predictor.compile(loaded, again)
    np.testing.assert_array_equal(canopy.Predictor.load(again).predict(X), loaded.predict(X))
    with pytest.raises(ValueError, match="compiled predictor"):
        canopy.Predictor.load(cpf, layout="df")
    # Without the magic it is no compiled file: the model loader reports the content.
    for f, msg in corrupt_copies(tmp_path, cpf, ".cpf", magic_msg="not supported"):
        with pytest.raises(canopy.CanopyError, match=msg) as e:
            canopy.Predictor.load(f)
        assert f.name in str(e.value)
    with pytest.raises(ValueError, match="layout"):
        canopy.Predictor.load(os.path.join(FOREST, model), layout="zigzag")


def test_outputs_never_replace_inputs(tmp_path):
    """Issue 35, row 11: the CLI's rule in the package too."""
    src = os.path.join(FOREST, "xgb_binary.json")
    model = tmp_path / "m.json"
    model.write_bytes(open(src, "rb").read())
    before = model.read_bytes()
    with pytest.raises(ValueError, match="is the input"):
        canopy.Predictor.compile(model, model)
    with pytest.raises(ValueError, match="is the input"):
        canopy.Predictor.compile(model, tmp_path / "." / "m.json")
    with pytest.raises(ValueError, match="is the input"):
        canopy.Predictor.load(model).save(model)
    assert model.read_bytes() == before
    idx = tmp_path / "i.idx"
    canopy.Index(np.random.rand(50, 2)).save(idx)
    with pytest.raises(ValueError, match="is the input"):
        canopy.Index.load(idx).save(idx)
    canopy.Index.load(idx).save(tmp_path / "j.idx")  # another file is fine


@pytest.mark.parametrize("leaf", [2**32 + 4, 2**31, -1])
def test_leaf_size_out_of_range_raises(leaf):
    with pytest.raises(ValueError, match="leaf_size"):
        canopy.Index(np.random.rand(20, 2), leaf_size=leaf)


def brute_paircount(d1, d2, edges, w1=None, w2=None, box=0.0):
    auto = d2 is None
    d2_ = brute_d2_f32(d1, d1 if auto else d2, box)
    e2 = (np.asarray(edges, dtype=np.float64) ** 2).astype(np.float32)
    w = np.outer(np.ones(len(d1)) if w1 is None else np.asarray(w1, np.float32).astype(np.float64),
                 np.ones(d2_.shape[1]) if (w2 if not auto else w1) is None else
                 np.asarray(w2 if not auto else w1, np.float32).astype(np.float64))
    if auto:
        np.fill_diagonal(d2_, np.inf)
    b = np.searchsorted(e2, d2_, side="right") - 1
    inside = (b >= 0) & (b < len(edges) - 1)
    return np.bincount(b[inside], weights=w[inside], minlength=len(edges) - 1)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("tree", ["kd", "ball", "vp"])
def test_paircount_against_brute_force(seed, tree):
    rng = np.random.default_rng(seed)
    a = rng.random((400, 3))
    b = rng.random((300, 3))
    wa, wb = rng.random(400) + 0.5, rng.random(300)
    for log, rmin in ((False, 0.0), (True, 0.01)):
        counts, edges = canopy.paircount(a, rmin, 0.4, 8, log=log, tree=tree)
        want_edges = (np.geomspace(rmin, 0.4, 9) if log else np.linspace(rmin, 0.4, 9))
        np.testing.assert_allclose(edges, want_edges, rtol=1e-12)
        assert counts.dtype == np.int64
        np.testing.assert_array_equal(counts, brute_paircount(a, None, edges))
        cross, _ = canopy.paircount(a, rmin, 0.4, 8, data2=b, log=log, tree=tree)
        np.testing.assert_array_equal(cross, brute_paircount(a, b, edges))
        wc, _ = canopy.paircount(a, rmin, 0.4, 8, data2=b, weights1=wa, weights2=wb, log=log,
                                 tree=tree)
        assert wc.dtype == np.float64
        np.testing.assert_allclose(wc, brute_paircount(a, b, edges, wa, wb), rtol=1e-10)
        wauto, _ = canopy.paircount(a, rmin, 0.4, 8, weights1=wa, log=log, tree=tree)
        np.testing.assert_allclose(wauto, brute_paircount(a, None, edges, wa), rtol=1e-10)
    # Each unordered pair twice in the auto-correlation; cross counts of a set with itself
    # add its zero-distance self pairs.
    auto, e = canopy.paircount(a, 0.0, 0.3, 5, tree=tree)
    cross, _ = canopy.paircount(a, 0.0, 0.3, 5, data2=a, tree=tree)
    assert cross[0] - auto[0] == len(a) and (cross[1:] == auto[1:]).all()


@pytest.mark.parametrize("seed", SEEDS)
def test_paircount_periodic_box(seed):
    rng = np.random.default_rng(seed)
    box = 2.0
    a = rng.random((350, 3)) * box
    b = rng.random((250, 3)) * box
    counts, edges = canopy.paircount(a, 0.05, 1.0, 6, data2=b, log=True, boxsize=box)
    np.testing.assert_array_equal(counts, brute_paircount(a, b, edges, box=box))
    auto, _ = canopy.paircount(a, 0.0, 1.0, 6, boxsize=box)
    np.testing.assert_array_equal(auto, brute_paircount(a, None, np.linspace(0, 1, 7), box=box))
    assert auto.sum() > canopy.paircount(a, 0.0, 1.0, 6)[0].sum()  # wrapped pairs count too


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("nbins", [17, 1000, 100_000, 1_000_000])
def test_paircount_many_bins(seed, nbins):
    # From 16 bins (unweighted) or 513 (weighted) the CPU finds bins by formula; the
    # brute force squares the returned edges, so the edges are checked too.
    rng = np.random.default_rng(seed)
    box = 1.0
    a = rng.random((400, 3)).astype(np.float32)
    b = rng.random((300, 3)).astype(np.float32)
    wa, wb = rng.random(400) + 0.5, rng.random(300) + 0.5
    for log, rmin in ((True, 0.01), (False, 0.0)):
        counts, edges = canopy.paircount(a, rmin, 0.45, nbins, log=log, backend="cpu")
        want = (np.geomspace(rmin, 0.45, nbins + 1) if log else np.linspace(rmin, 0.45, nbins + 1))
        np.testing.assert_allclose(edges, want, rtol=1e-12)
        np.testing.assert_array_equal(counts, brute_paircount(a, None, edges))
        cross, _ = canopy.paircount(a, rmin, 0.45, nbins, data2=b, log=log, boxsize=box,
                                    backend="cpu")
        np.testing.assert_array_equal(cross, brute_paircount(a, b, edges, box=box))
        wc, _ = canopy.paircount(a, rmin, 0.45, nbins, data2=b, weights1=wa, weights2=wb,
                                 log=log, backend="cpu")
        np.testing.assert_allclose(wc, brute_paircount(a, b, edges, wa, wb), rtol=1e-10,
                                   atol=1e-12)


def test_paircount_matches_ckdtree_cumulative_counts():
    spatial = pytest.importorskip("scipy.spatial")
    rng = np.random.default_rng(12)
    a = rng.random((500, 2)).astype(np.float32)
    b = rng.random((400, 2)).astype(np.float32)
    counts, edges = canopy.paircount(a, 0.0, 0.5, 10, data2=b)
    # cKDTree counts dist <= r; shift the radii below each edge to count dist < edge.
    radii = np.nextafter(edges[1:].astype(np.float32), np.float32(0)).astype(np.float64)
    cum = spatial.cKDTree(a).count_neighbors(spatial.cKDTree(b), radii)
    assert abs(int(counts.sum()) - int(cum[-1])) <= 2  # float64 vs float32 at the edge
    assert (np.abs(np.cumsum(counts) - cum) <= 2).all()


def test_paircount_bad_input():
    a = np.random.rand(50, 3)
    with pytest.raises(ValueError, match="half the periodic box"):
        canopy.paircount(a, 0.0, 0.6, 4, boxsize=1.0)
    with pytest.raises(ValueError, match="outside the periodic box"):
        canopy.paircount(a * 2, 0.0, 0.4, 4, boxsize=1.0)
    with pytest.raises(ValueError, match="nbins"):
        canopy.paircount(a, 0.0, 0.4, 0)
    with pytest.raises(ValueError, match="nbins"):
        canopy.paircount(a, 0.0, 0.4, 2.5)
    with pytest.raises(ValueError, match="rmin > 0"):
        canopy.paircount(a, 0.0, 0.4, 4, log=True)
    with pytest.raises(ValueError, match="rmin < rmax"):
        canopy.paircount(a, 0.5, 0.4, 4)
    with pytest.raises(ValueError, match="weights1 has 3 values"):
        canopy.paircount(a, 0.0, 0.4, 4, weights1=[1, 2, 3])
    with pytest.raises(ValueError, match="weights2 needs data2"):
        canopy.paircount(a, 0.0, 0.4, 4, weights2=np.ones(50))
    with pytest.raises(ValueError, match="columns"):
        canopy.paircount(a, 0.0, 0.4, 4, data2=np.zeros((5, 2)))
    bad = a.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN|nan|not finite"):
        canopy.paircount(bad, 0.0, 0.4, 4)
    w = np.ones(50)
    w[7] = np.inf
    with pytest.raises(ValueError, match="weight 7"):
        canopy.paircount(a, 0.0, 0.4, 4, weights1=w)
    with pytest.raises(ValueError, match="boxsize"):
        canopy.paircount(a, 0.0, 0.4, 4, boxsize=0)
    with pytest.raises(TypeError):
        canopy.paircount(a.astype(np.complex64), 0.0, 0.4, 4)
    ro = np.asfortranarray(a)[::2]
    ro.setflags(write=False)
    np.testing.assert_array_equal(canopy.paircount(ro, 0.0, 0.4, 4)[0],
                                  canopy.paircount(np.ascontiguousarray(a[::2]), 0.0, 0.4, 4)[0])


def python_blocks(text):
    return re.findall(r"```python\n(.*?)```", text, re.S)


def readme_python_examples():
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    section = text.split("\n## Python\n", 1)[1].split("\n## ", 1)[0]
    examples = python_blocks(section)
    # The package's own README (python/README.md), run the same way.
    examples += python_blocks(open(os.path.join(ROOT, "python", "README.md"),
                                   encoding="utf-8").read())
    return examples


def test_readmes_have_their_python_examples():
    assert len(readme_python_examples()) == 5  # four in README.md, one in python/


@pytest.mark.parametrize("i", range(5))
def test_readme_python_example_runs(i, tmp_path, monkeypatch):
    # Run from a copy of the paths the examples read, so the files they write stay out
    # of the repository.
    monkeypatch.chdir(tmp_path)
    os.symlink(os.path.join(ROOT, "tests"), tmp_path / "tests")
    os.symlink(os.path.join(ROOT, "README.md"), tmp_path / "README.md")
    exec(compile(readme_python_examples()[i], f"README.md example {i + 1}", "exec"), {})


def test_repr_names_the_index_not_its_address():
    ix = canopy.Index(np.random.default_rng(3).random((500, 3)), tree="kd", leaf_size=8)
    r = repr(ix)
    assert r.startswith("<canopy.Index kd: 500 points in 3-D, ") and "leaf size 8" in r, r
    assert "built in" in r and "0x" not in r, r
    ix.close()
    assert repr(ix) == "<canopy.Index closed>"


def test_namespace_holds_public_names_only():
    public = {n for n in dir(canopy) if not n.startswith("_")}
    assert public == set(canopy.__all__) - {"__version__"}


def test_info_says_cpu_only_or_cuda():
    i = canopy.info()
    assert i["version"] == canopy.__version__ and i["build"] in ("cpu-only", "cuda")
    assert i["threads"] >= 1 and i["isa"] in ("scalar", "sse4.2", "avx2", "avx512")
    # a GPU is named, or the reason there is none is given
    assert (i["gpu"] is None) == (i["gpu_why_not"] != ""), i
    if i["build"] == "cpu-only":
        assert i["gpu"] is None and "CUDA module" in i["gpu_why_not"], i
