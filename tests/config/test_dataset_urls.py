"""A dataset (or a prompt file) given as a URL is refused as one, with the download that makes it a
file (QA: `dataset: {path: https://huggingface.co/...}`, as the dataset's page links it, read as the
relative path `https:/huggingface.co/...`, "not found (a relative path is read from ...)")."""

import pytest

from support.cli_in_process import tuner_here
from tuner.config.suite import load_suite
from tuner.config.yamlfile import ConfigError

HF = "https://huggingface.co/datasets/anon8231489123/ShareGPT_Vicuna_unfiltered/resolve/main/sg.json?download=true"


def test_a_dataset_url_is_refused_with_the_download(tmp_path):
    with pytest.raises(ConfigError) as err:
        load_suite({"name": "t", "dataset": {"path": HF}, "single": {"lengths": [8]}}, tmp_path)
    assert str(err.value) == (f"<inline suite>: dataset.path: {HF} is a URL, and the tuner reads local files "
                              f"only: download it first (curl -L -o sg.json '{HF}') and give the file")


@pytest.mark.parametrize("url", ["hf://datasets/a/b/requests.jsonl", "s3://bucket/traffic.jsonl"])
def test_a_url_curl_cannot_fetch_is_refused_as_a_url(tmp_path, url):
    with pytest.raises(ConfigError) as err:
        load_suite({"name": "t", "dataset": {"path": url}, "single": {"lengths": [8]}}, tmp_path)
    assert str(err.value) == (f"<inline suite>: dataset.path: {url} is a URL, and the tuner reads local files "
                              "only: copy it to this machine and give the file")


def test_a_prompt_file_url_is_refused_by_tuner_bench_before_any_request(tmp_path):
    (tmp_path / "s.yaml").write_text("name: u\nprompts:\n  - {name: a, file: 'https://example.com/p.txt'}\n"
                                     "single: {lengths: [8]}\n")
    # port 9 (discard): nothing answers there, and the suite is refused before the server is asked
    res = tuner_here("bench", "--url", "http://127.0.0.1:9", "--suite", "s.yaml", "--json", "out.json",
                     cwd=tmp_path)
    assert res.exit_code == 2
    assert res.stderr.strip().splitlines() == [
        "error: s.yaml: prompts[0].file: https://example.com/p.txt is a URL, and the tuner reads local files "
        "only: download it first (curl -L -o p.txt 'https://example.com/p.txt') and give the file"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.yaml"]


def test_a_local_path_with_a_colon_is_still_a_file(tmp_path):
    # a file whose name holds a colon (a timestamped export) is no URL: no "://" after a scheme
    (tmp_path / "run:1.jsonl").write_text('{"prompt": "Name a colour.", "max_tokens": 8}\n')
    suite = load_suite({"name": "t", "dataset": {"path": "run:1.jsonl"}, "single": {"lengths": [8]}}, tmp_path)
    assert [p.text for p in suite.prompts] == ["Name a colour."]
