"""A ValueError outside SGLang's argument handling is no argument error, even with no loading line
before it (QA qa160, qa165): SGLang 0.5.23 loads the tokenizer in the launching process after the
schedulers start (entrypoints/engine.py _launch_subprocesses -> init_tokenizer_manager), and under
--log-level warning nothing is logged before its failure."""

from __future__ import annotations

from tuner.server.failures import classify_log, error_line

# SGLang 0.5.23, --log-level warning, a model whose tokenizer class this transformers lacks (shortened).
TOKENIZER_LOG = """\
Traceback (most recent call last):
  File "<frozen runpy>", line 198, in _run_module_as_main
  File "/venv/lib/python3.11/site-packages/sglang/launch_server.py", line 40, in <module>
    server_args, run_server = prepare_server_args(sys.argv[1:]), run_server
  File "/venv/lib/python3.11/site-packages/sglang/srt/entrypoints/http_server.py", line 2011, in launch_server
    tokenizer_manager, template_manager, scheduler_infos, port_args = _launch_subprocesses(
  File "/venv/lib/python3.11/site-packages/sglang/srt/entrypoints/engine.py", line 1339, in _launch_subprocesses
    tokenizer_manager, template_manager = init_tokenizer_manager_func(
  File "/venv/lib/python3.11/site-packages/sglang/srt/entrypoints/engine.py", line 203, in init_tokenizer_manager
    tokenizer_manager = TokenizerManagerClass(server_args, port_args)
  File "/venv/lib/python3.11/site-packages/sglang/srt/managers/tokenizer_manager.py", line 642, in __init__
    self.tokenizer = get_tokenizer(
  File "/venv/lib/python3.11/site-packages/sglang/srt/utils/hf_transformers_utils.py", line 512, in get_tokenizer
    tokenizer = AutoTokenizer.from_pretrained(
  File "/venv/lib/python3.11/site-packages/transformers/models/auto/tokenization_auto.py", line 1013, in from_pretrained
    raise ValueError(
ValueError: Tokenizer class Qwen2Tokenizer does not exist or is not currently imported.
"""


def test_tokenizer_value_error_is_not_invalid_args():
    assert classify_log(TOKENIZER_LOG, 1, "startup") == "other"
    assert error_line(TOKENIZER_LOG) == (
        "ValueError: Tokenizer class Qwen2Tokenizer does not exist or is not currently imported.")


def test_value_error_through_server_args_stays_invalid_args():
    # the same log shape, raised by SGLang's argument handling (arg_groups/speculative_hook.py)
    log = TOKENIZER_LOG.split('  File "/venv/lib/python3.11/site-packages/sglang/srt/entrypoints/http')[0] + (
        '  File "/venv/lib/python3.11/site-packages/sglang/srt/server_args.py", line 700, in __post_init__\n'
        '    self._handle_speculative_decoding()\n'
        '  File "/venv/lib/python3.11/site-packages/sglang/srt/arg_groups/speculative_hook.py", line 1178, '
        'in _handle_eagle_family\n'
        "ValueError: trtllm_mha backend only supports topk = 1 for speculative decoding.\n")
    assert classify_log(log, 1, "startup") == "invalid_args"


def test_bare_value_error_line_without_frames_keeps_the_loading_rule():
    # no frames to read: what came before decides, as before
    assert classify_log("ValueError: bad --speculative-eagle-topk\n", 1, "startup") == "invalid_args"
    assert classify_log("Load weight begin\nValueError: bad shape\n", 1, "startup") == "other"
