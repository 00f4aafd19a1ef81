"""What every number a run reports means, in one line, and what its `n` counts.

`memeval kpis` prints this table and `docs/kpis.md` is its markdown (a test holds them equal,
and holds every KPI `memeval.scoring.kpis` computes to an entry here): a name such as
`synthesis_gain` means nothing to a newcomer until it is said in words, and `pack_hit n=112`
over 56 probes reads as a miscount until one is told that each probe is asked in two phases.
"""

from __future__ import annotations

from typing import NamedTuple


class Meaning(NamedTuple):
    what: str
    n: str  # what the `n` beside the value counts


PROBE = "scored probes (a scenario's probe counts once per phase it is asked in)"
RECALL = "scored probes asked in the recall phase"
FIXTURES = "dimension fixtures that ran to the end"
CASES = "cases run, whatever became of them (spend is paid either way)"

MEANINGS: dict[str, Meaning] = {
    "composite": Meaning(
        "The weighted mean of the dimension scores (weights renormalised over the dimensions "
        "that ran): the one number a run is judged on.",
        FIXTURES,
    ),
    "temporal": Meaning("Share of checks passed by fixtures about what was true when.", FIXTURES),
    "conflict": Meaning(
        "Share of checks passed by fixtures that plant contradicting statements.", FIXTURES
    ),
    "multihop": Meaning(
        "Share of checks passed by fixtures whose answer joins several facts.", FIXTURES
    ),
    "abstention": Meaning(
        "Share of checks passed by fixtures whose right answer is to say nothing is known.",
        FIXTURES,
    ),
    "provenance": Meaning(
        "Share of checks passed by fixtures that ask where a fact came from.", FIXTURES
    ),
    "pack_hit_recall": Meaning(
        "Share of recall-phase probes whose pack holds an expected answer.", RECALL
    ),
    "pack_hit": Meaning(
        "Share of probes, both phases, whose pack (the context the engine returns) holds an "
        "expected answer.",
        PROBE,
    ),
    "host_pack_hit": Meaning(
        "Pack hit on the view the host would paste under --deadline, --pack-tokens or "
        "--pack-sections, next to pack_hit.",
        "scored probes run with host limits",
    ),
    "mrr": Meaning(
        "Mean reciprocal rank of the first pack unit holding an expected answer (0 if none).",
        PROBE,
    ),
    "hit_at_1": Meaning(
        "Share of probes whose every expected string is in the pack's first unit.",
        "scored probes that expect strings (abstain probes excepted)",
    ),
    "hit_at_3": Meaning(
        "Share of probes whose every expected string is within the pack's first 3 units.",
        "scored probes that expect strings (abstain probes excepted)",
    ),
    "extractive_answer": Meaning(
        "Share of probes answered right by taking the pack's best sentence, with no model.",
        PROBE,
    ),
    "model_answer": Meaning(
        "Share of probes and fixture queries the answering model (--llm) got right from the pack.",
        "probes and fixture queries a model answered",
    ),
    "captured": Meaning(
        "Share of synthesis-phase probes whose answer is among what the engine says it derived.",
        "synthesis-phase probes on an engine that shows what it derived",
    ),
    "leaks": Meaning(
        "Share of leak checks whose pack shows a string it must never show (another tenant's "
        "data, a forgotten fact).",
        "probes with forbidden strings (abstain probes excepted)",
    ),
    "paraphrase_pack_hit": Meaning(
        "Pack hit over probes worded unlike the text that was written.",
        "scored probes in paraphrase style",
    ),
    "lexical_pack_hit": Meaning(
        "Pack hit over probes that reuse the written words.", "scored probes in lexical style"
    ),
    "evidence_recall": Meaning(
        "Share of probes whose pack traces back to every write that holds the answer: what "
        "substring luck cannot reach (LoCoMo's headline).",
        "scored probes that name their evidence writes",
    ),
    "evidence_mrr": Meaning(
        "Mean reciprocal rank of the first pack unit traced to an evidence write.",
        "scored probes that name their evidence writes",
    ),
    "extractive_f1": Meaning(
        "Mean token F1 of the extractive answer against the gold one.",
        "scored probes with a gold answer",
    ),
    "model_f1": Meaning(
        "Mean token F1 of the model's answer against the gold one.",
        "scored probes with a gold answer a model answered",
    ),
    "abstain_probes": Meaning(
        "Share of probes whose right answer is 'never said' that the engine got right.",
        "scored abstain probes",
    ),
    "judge_answer": Meaning(
        "Share of model answers the judge model (--judge) graded right against the gold one.",
        "answers the judge graded",
    ),
    "lesson_in_pack": Meaning(
        "Pack hit over probes of scenarios that teach a lesson.", "probes tagged learning"
    ),
    "lesson_answered": Meaning(
        "Extractive answer over probes of scenarios that teach a lesson.",
        "probes tagged learning",
    ),
    "synthesis_gain": Meaning(
        "Pack hit after the engine synthesises (post_turn, compaction) minus pack hit before: "
        "what its own learning adds.",
        "scored probes asked in the synthesis phase",
    ),
    "beliefs_built": Meaning(
        "Beliefs the engine distilled (build_beliefs) over the scenarios; n/a for an engine "
        "without beliefs.",
        "scenarios on an engine that builds beliefs",
    ),
    "surprise_in_pack": Meaning(
        "Pack hit over probes about an unexpected turn of events.", "probes tagged surprise"
    ),
    "surprise_mrr": Meaning(
        "Mean reciprocal rank over probes about an unexpected turn of events.",
        "probes tagged surprise",
    ),
    "conflict_pack_hit": Meaning(
        "Pack hit over the probes of conflict scenarios that list the disagreeing answers they "
        "accept (named planted_flagged before).",
        "scored conflict probes that list accepted answers",
    ),
    "spurious": Meaning(
        "Share of fixture queries with no planted conflict that come back reporting one; n/a "
        "for an engine that never reports conflicts.",
        "queries of fixtures that plant no conflict, on an engine that reports conflicts",
    ),
    "fresh_first": Meaning(
        "Share of probes with a superseded value whose pack ranks the current value first.",
        "scored probes with a stale value",
    ),
    "disagreement_in_pack": Meaning(
        "Share of those conflict probes whose pack holds one of the answers they accept.",
        "scored conflict probes that list accepted answers",
    ),
    "erase_failures": Meaning(
        "Share of face searches, after a forget by id or of the whole tenant, that found a "
        "canary (or a listing that never settled).",
        "face searches after a forget (faces the engine lacks excepted)",
    ),
    "cross_tenant_leaks": Meaning(
        "Share of face searches in another tenant that found a canary.",
        "face searches of another tenant",
    ),
    "forget_write_supported": Meaning(
        "Share of audited cases whose engine could forget one write.",
        "cases with an erase audit by write id",
    ),
    "probe_turns_kept": Meaning(
        "Share of logged probe questions that stayed in memory after scoring.",
        "probes whose question was logged",
    ),
    "injected_copies": Meaning(
        "Share of face searches that found a stored copy of an injected context block.",
        "face searches of the loop guard",
    ),
    "tokens_per_correct": Meaning(
        "Pack tokens spent per right answer (the model's where one answered, else the "
        "extractive one).",
        "probes answered right",
    ),
    "engine_usd": Meaning(
        "What the engine reported spending (its own models, its API); a dash if it reports none.",
        CASES,
    ),
    "answerer_usd": Meaning(
        "What the answering and judge models cost; a dash without --llm.", CASES
    ),
    "usd_per_correct": Meaning(
        "Engine and model spend divided by the probes and checks passed.",
        "probes hit plus fixture checks passed",
    ),
    "pack_tokens": Meaning("Mean size of a probe's pack, in tokens.", PROBE),
    "pre_turn_p50": Meaning(
        "Median time of pre_turn, the call before each agent turn.", "pre_turn calls"
    ),
    "pre_turn_p95": Meaning("95th percentile time of pre_turn.", "pre_turn calls"),
    "pre_turn_p99": Meaning("99th percentile time of pre_turn.", "pre_turn calls"),
    "pre_turn_timeout_rate": Meaning(
        "Share of pre_turn calls slower than 1 s, which would stall an agent's reply.",
        "pre_turn calls",
    ),
    "deadline_timeout_rate": Meaning(
        "Share of probe packs that arrived after the host's deadline (--deadline).",
        "probes run with a deadline",
    ),
    "probe_p50": Meaning("Median time to answer a probe (pack or query).", "probe calls"),
    "probe_p95": Meaning("95th percentile time to answer a probe.", "probe calls"),
    "build_ms": Meaning("Mean time of build_beliefs.", "build_beliefs calls"),
    "write_to_ranked_p50": Meaning(
        "Median time from a write's ack to the first pack that ranks it.", "timed writes ranked"
    ),
    "write_to_ranked_p95": Meaning(
        "95th percentile time from a write's ack to the first pack that ranks it.",
        "timed writes ranked",
    ),
    "unranked_rate": Meaning(
        "Share of timed writes that no pack ranked within the settle timeout.", "timed writes"
    ),
}
