"""How much of the context a request may use, by SGLang 0.5.23's two checks.

1. The tokenizer manager (``srt/managers/tokenizer_manager.py`` ``_validate_one_request``, lines
   1307-1378, ``allow_auto_truncate`` off, SGLang's default): the input plus EAGLE's reserved draft
   slots must be under the context length, and with the request's own ``max_new_tokens`` within it.
   Its ``ValueError`` is the request's HTTP 400 (:meth:`ContextCheck.check_counts`).
2. The scheduler (``srt/managers/scheduler.py`` ``handle_generate_request``), on what passed 1:
   ``init_req_max_new_tokens`` (line 2693) lowers ``max_new_tokens`` to ``max_req_len - input - 1``,
   and ``validate_input_length`` (``managers/utils.py`` line 259) refuses an input of
   ``max_req_input_len`` tokens or more, where ``max_req_len = min(context_len - 1, KV capacity - 1)``
   and ``max_req_input_len = max_req_len - 5`` (``managers/tp_worker.py`` ``get_worker_info``).
   Reserved slots do not count here. So a request the tokenizer manager lets through within 2 tokens
   of the context is served 1 or 2 tokens short, finishing ``length`` (:meth:`ContextCheck.served_max`),
   and one within 6 tokens of it is refused with the scheduler's abort, a 400 with its message
   (``schedule_batch.py`` ``set_finish_with_abort``; ``tokenizer_manager.py``
   ``_handle_abort_finish_reason`` raises it as the ``ValueError`` a non-streamed request answers).

Raises ``ValueError`` with SGLang's words; never anything else.
"""

from __future__ import annotations

#: what the scheduler takes for "no limit" (scheduler.py ``init_req_max_new_tokens``: ``1 << 30``)
NO_LIMIT = 1 << 30


class ContextCheck:
    """SGLang's context rules for one server: ``reserved`` is ``compute_num_reserved_tokens()``
    (``managers/utils.py``: EAGLE stores draft tokens in the output slots, so it reserves
    ``max(topk * steps, num_draft_tokens)`` per request); ``kv_capacity`` the KV cache's tokens
    (``max_total_num_tokens``; None: not smaller than the context)."""

    def __init__(self, context_len: int, reserved: int, count_tokens, kv_capacity: int | None = None):
        self.context_len, self.reserved, self.count_tokens = context_len, reserved, count_tokens
        # tp_worker.py get_worker_info
        self.max_req_len = min(context_len - 1, (context_len if kv_capacity is None else kv_capacity) - 1)
        self.max_req_input_len = self.max_req_len - 5

    def check_counts(self, n_input: int, max_new_tokens: int | None) -> int:
        """The tokenizer manager's check on counts alone (a request of ``n_input`` input tokens):
        raises ``ValueError`` with SGLang's message; returns the tokens left of the context after the
        input and the reserved slots."""
        n_in = n_input + self.reserved
        ctx = self.context_len
        if n_in >= ctx:
            raise ValueError(f"The input ({n_in} tokens) is longer than the model's context length "
                             f"({ctx} tokens).")
        m = max_new_tokens
        if m is not None and m + n_in > ctx:
            raise ValueError(
                f"Requested token count exceeds the model's maximum context length of {ctx} tokens. "
                f"You requested a total of {m + n_in} tokens: {n_in} tokens from the input messages "
                f"and {m} tokens for the completion. Please reduce the number of tokens in the input "
                f"messages or the completion to fit within the limit.")
        return ctx - n_in

    def served_max(self, n_input: int, max_new_tokens: int | None) -> int:
        """The scheduler's part, after :meth:`check_counts` passed: the ``max_new_tokens`` it runs the
        request with (``init_req_max_new_tokens``: ``None`` is no limit), or ``ValueError`` with its
        message for an input of ``max_req_input_len`` tokens or more (``validate_input_length``)."""
        if n_input >= self.max_req_input_len:
            raise ValueError(f"Input length ({n_input} tokens) exceeds the maximum allowed length "
                             f"({self.max_req_input_len} tokens). Use a shorter input or enable "
                             "--allow-auto-truncate.")
        asked = NO_LIMIT if max_new_tokens is None else max_new_tokens
        return max(0, min(asked, self.max_req_len - n_input - 1))
