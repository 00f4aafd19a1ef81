"""Every pack metric on hand-made packs."""

from __future__ import annotations

from memeval.results import Phase, ProbeResult
from memeval.scoring.pack import (
    captured,
    extractive_answer,
    fresh_first,
    grade_answer,
    rank,
    score_pack,
    units,
)
from memeval.suites.scenario import Probe

PACK = """# Context for the reply

## Documents
- The cafeteria closes at 15:00 on Fridays.
- Parking permits renew every March.

## This agent's history
Earlier we agreed the offsite moves from Porto to Seville.
- The offsite budget is 12000 euros.
"""


def probe(**kw) -> Probe:
    base = {
        "id": "p",
        "question": "Where is the offsite?",
        "style": "lexical",
        "expect": ["Seville"],
    }
    return Probe.model_validate(base | kw)


def blank(p: Probe) -> ProbeResult:
    return ProbeResult(
        probe=p.id,
        phase=Phase.recall,
        via=p.via.value,
        style=p.style.value,
        scored=p.scored,
        question=p.question,
        expect=p.expect,
        stale=p.stale,
        forbidden=p.forbidden,
    )


def test_units_skip_title_headings_and_blanks():
    lines = units(PACK)
    assert lines[0] == "- The cafeteria closes at 15:00 on Fridays."
    assert len(lines) == 4
    assert not any(line.startswith("#") for line in lines)


def test_rank_is_one_based_and_counts_prose():
    lines = units(PACK)
    assert rank(lines, "seville") == 3
    assert rank(lines, "cafeteria") == 1
    assert rank(lines, "Lisbon") is None


def test_empty_pack_scores_nothing():
    p = probe()
    result = score_pack(p, "", blank(p))
    assert not result.hit and result.rank is None and result.rr == 0.0
    assert result.extractive == "" and not result.extractive_ok
    assert units("# Only a title\n\n## Empty section\n") == []


def test_pack_hit_needs_every_expected_string_and_ignores_title():
    p = probe(expect=["Seville", "12000"])
    assert score_pack(p, PACK, blank(p)).hit
    p2 = probe(expect=["Seville", "Context for"])
    assert not score_pack(p2, PACK, blank(p2)).hit  # only the title holds it


def test_case_insensitive_substring():
    p = probe(expect=["SEVILLE"])
    assert score_pack(p, PACK, blank(p)).hit


def test_mrr_reciprocal_of_first_expected():
    p = probe(expect=["12000", "Seville"])
    result = score_pack(p, PACK, blank(p))
    assert result.rank == 4
    assert result.rr == 0.25


def test_stale_before_fresh():
    p = probe(expect=["Seville"], stale=["Porto"])
    pack = "# t\n- The offsite is in Porto.\n- Update: the offsite is now in Seville.\n"
    assert fresh_first(units(pack), p) == (False, True)
    result = score_pack(p, pack, blank(p))
    assert result.hit and result.stale_first and not result.fresh_first


def test_fresh_before_stale_and_same_line():
    p = probe(expect=["Seville"], stale=["Porto"])
    assert fresh_first(units("# t\n- Seville now.\n- Porto before.\n"), p) == (True, False)
    # both in one unit: neither precedes the other, so it is not fresh first
    assert fresh_first(units(PACK), p) == (False, False)
    assert fresh_first(units("# t\n- only Seville\n"), p) == (True, False)
    assert fresh_first(units("# t\n- only Porto\n"), p) == (False, True)
    assert fresh_first(units("# t\n- Seville\n"), probe()) == (None, None)


def test_forbidden_string_is_a_leak_even_in_the_title():
    p = probe(forbidden=["Porto", "Context for"])
    result = score_pack(p, PACK, blank(p))
    assert result.leaked == ["Porto", "Context for"]
    clean = score_pack(p, "# t\n- Seville\n", blank(p))
    assert clean.leaked == []


def test_extractive_answer_most_shared_words_earliest_on_tie():
    lines = ["- alpha beta", "- gamma delta", "- beta alpha again"]
    assert extractive_answer(lines, "What about alpha and beta?") == "- alpha beta"
    assert extractive_answer(lines, "Tell me of gamma") == "- gamma delta"
    assert extractive_answer(lines, "nothing shared here") == ""
    # stopwords do not count toward the overlap
    assert (
        extractive_answer(["- the of and", "- budget"], "What is the budget of the team?")
        == "- budget"
    )


def test_grade_answer_expect_accept_and_stale():
    p = probe(expect=["Seville"], stale=["Porto"], accept=["Andalusia"])
    assert grade_answer("It is Seville.", p)
    assert grade_answer("Somewhere in Andalusia.", p)
    assert not grade_answer("Seville, formerly Porto.", p)
    assert not grade_answer("Madrid", p)
    assert not grade_answer("", p)
    assert not grade_answer(None, p)


def test_extractive_answer_is_graded_in_score_pack():
    p = probe(question="Where does the offsite move to?", expect=["Seville"])
    result = score_pack(p, PACK, blank(p))
    assert "Seville" in result.extractive
    assert result.extractive_ok


def test_captured_needs_every_expected_in_one_derived_text():
    p = probe(expect=["Seville", "12000"])
    assert captured(["offsite: Seville, 12000 euros"], p)
    assert not captured(["offsite: Seville", "budget 12000"], p)
    assert not captured([], p)
