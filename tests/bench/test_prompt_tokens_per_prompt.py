"""The same prompt counted as another number of input tokens: SGLang 0.5.23's ``prompt_tokens`` is the
length of the prompt's token ids, the same for every answer to the same prompt on one server (a
prefix-cache hit is ``cached_tokens`` and leaves it whole). Answers that count one prompt twice differently
come from two servers (a router in front of two deployments with other tokenizers or chat templates;
QA: ``tuner bench`` measured answers counting ``fib`` as 21 and 15 tokens in turn, exit 0), and one
stream whose chunks say two counts holds two requests' answers. Such an answer fails its request
(``protocol``); an honest server's answers, cache hits and other lengths of the same prompt among them,
stay answers. A real aiohttp server on 127.0.0.1."""

from __future__ import annotations

import asyncio

from support.tokenizing_router import SUITE, Router

from tuner.bench.client import BenchClient
from tuner.bench.records import RequestRecord
from tuner.bench.runner import run_suite


def test_answers_counting_one_prompt_two_ways_fail_as_another_server():
    with Router(divisors=(4, 3)) as srv:
        result = run_suite(srv.url, SUITE)
    records = result.records
    bad = [r for r in records if not r.ok]
    assert bad and all(r.error_kind == "protocol" for r in bad), [(r.ok, r.error) for r in records]
    # the warm-up's answer to fib (63 chars // 4 = 15) is the reference; the next answer to it says 21
    first = next(r for r in records if r.phase == "single")
    assert not first.ok and first.error == (
        "prompt_tokens 21 for prompt 'fib', where an earlier answer to the same prompt (warmup fib) said 15: "
        "one server tokenizes a prompt alike every time; another server (another tokenizer, chat template "
        "or model) answered part of the suite"), first.error
    # every answer that stayed one counts its prompt as the first answer to it did
    kept = {(r.prompt, r.prompt_tokens) for r in records if r.ok}
    assert len({p for p, _ in kept}) == len(kept), kept


def test_an_honest_server_with_cache_hits_and_other_lengths_fails_nothing():
    with Router(divisors=(4,)) as srv:
        result = run_suite(srv.url, SUITE)
    assert result.n_failed == 0, [r.error for r in result.records if not r.ok]
    assert {(r.prompt, r.prompt_tokens) for r in result.records} == {("fib", 15), ("haiku", 12)}


def ask_chat(url: str, prompts: list[str]) -> list[RequestRecord]:
    async def go():
        async with BenchClient(url, api="chat", stream=True, timeout_s=30) as client:
            await client.server_info()
            out = []
            for i, text in enumerate(prompts):
                out.append(await client.request(RequestRecord("single", f"p{i}", 6), text))
            return out
    return asyncio.run(go())


def test_a_chat_stream_whose_chunks_count_its_prompt_two_ways_fails():
    with Router(stream_counts=[30, 30, 30, 44]) as srv:
        (record,) = ask_chat(srv.url, ["Name a colour."])
    assert not record.ok and record.error_kind == "protocol", record
    assert "prompt_tokens went from 30 to 44 within the stream: one request's input has one length" \
        in record.error, record.error


def test_reasoning_chat_answers_to_the_same_turns_agree_and_stay_answers():
    with Router(divisors=(4,)) as srv:
        records = ask_chat(srv.url, ["Name a colour.", "Name a colour.", "Name a fruit, please."])
    assert all(r.ok for r in records), [r.error for r in records]
    assert records[0].prompt_tokens == records[1].prompt_tokens != records[2].prompt_tokens
    assert records[0].output_text == "t1 t2 t3 w4 w5 w6 "


def test_compare_against_a_baseline_that_counts_the_prompts_otherwise_exits_1(tmp_path):
    """QA: ``tuner bench --compare base.json`` against a server counting every prompt otherwise than
    the baseline's server did (another tokenizer) printed a 2.21x speedup, exit 0. The tables still
    print; the line names the prompt and both counts, exit 1. The same tokenizer compares, exit 0."""
    import yaml
    from click.testing import CliRunner

    from tuner.cli import cli

    suite = tmp_path / "two.yaml"
    suite.write_text(yaml.safe_dump(SUITE))
    base = tmp_path / "base.json"

    def bench(url, *more):
        return CliRunner().invoke(cli, ["bench", "--url", url, "--suite", str(suite), *more],
                                  catch_exceptions=False)

    with Router(divisors=(4,)) as srv:
        saved = bench(srv.url, "--json", str(base))
        same = bench(srv.url, "--compare", str(base))
    assert saved.exit_code == 0 and same.exit_code == 0, (saved.output, same.output)
    assert "input tokens" not in same.output
    with Router(divisors=(3,)) as other:
        r = bench(other.url, "--compare", str(base))
    assert r.exit_code == 1, r.output
    assert ("error: the --compare result counts prompt 'fib' as 15 input tokens, this server as 21: another "
            "tokenizer, chat template or model") in r.output, r.output
    assert "speedup" in r.output.lower()  # the tables came first

