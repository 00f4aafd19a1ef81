"""Answers at a moment: values replaced in prose with a future one already on record, "latest"
as time framing, changes within one day, records stored newest first, expired permits."""

from __future__ import annotations

from datetime import UTC, datetime

from memeval.suites.fixture import Assertion
from tests.engines.helpers import abstained, ask, ask_at, fact, loaded, said


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def test_a_future_value_in_prose_does_not_silence_the_current_one():
    engine = loaded(
        fact(
            "p1",
            "A day pass at the Lumen coworking space costs EUR 25.",
            valid_from=at("2023-01-01"),
            recorded_at=at("2023-01-01"),
        ),
        fact(
            "p2",
            "The Lumen coworking space raised its day pass to EUR 32.",
            valid_from=at("2024-09-01"),
            recorded_at=at("2024-09-01"),
        ),
        fact(
            "p3",
            "From January 2030 a day pass at the Lumen coworking space will cost EUR 40.",
            valid_from=at("2030-01-01"),
            recorded_at=at("2025-02-01"),
        ),
    )
    question = "How much is a day pass at the Lumen coworking space?"
    now = ask(engine, question)
    assert said(now, "32") and not said(now, "40")
    assert said(ask_at(engine, question, at("2030-03-01")), "40")
    before = ask_at(engine, question, at("2023-06-01"))
    assert said(before, "25") and not said(before, "32")


def test_latest_only_frames_the_question_in_time():
    engine = loaded(
        fact("t1", "Container TGHU 8812045 was discharged at the port of Valencia."),
        fact("t2", "Container TGHU 8812054 was discharged at the port of Genoa."),
    )
    result = ask(engine, "What is the latest position of container TGHU 8812054?")
    assert said(result, "Genoa") and not said(result, "Valencia")


def test_a_slot_changed_twice_in_one_day_is_read_at_a_clock_time():
    def gate(fid: str, value: str, hour: str) -> Assertion:
        return fact(
            fid,
            f"Flight KL1402 boards at gate {value}.",
            spo=("KL1402", "gate", value),
            exclusive=True,
            valid_from=at(f"2025-07-14T{hour}"),
        )

    engine = loaded(
        gate("g1", "D4", "05:00"), gate("g2", "D11", "07:05"), gate("g3", "E2", "07:40")
    )
    question = "Which gate does flight KL1402 leave from?"
    early = ask_at(engine, question, at("2025-07-14T07:20"))
    assert said(early, "D11") and not said(early, "E2")
    assert said(ask(engine, question), "E2")


def test_records_stored_newest_first_answer_each_window():
    def limit(fid: str, value: str, start: str) -> Assertion:
        return fact(
            fid,
            f"The partner API rate limit for Quokka Labs is {value} requests per minute.",
            spo=("Quokka Labs", "rate_limit", f"{value} requests per minute"),
            exclusive=True,
            valid_from=at(start),
            recorded_at=at(start),
        )

    engine = loaded(
        limit("l3", "120", "2025-04-01"),
        limit("l2", "300", "2024-08-01"),
        limit("l1", "600", "2023-01-01"),
    )
    question = "What is the partner API rate limit for Quokka Labs?"
    assert said(ask(engine, question), "120")
    assert said(ask_at(engine, question, at("2024-12-01")), "300")
    assert said(ask_at(engine, question, at("2023-06-01")), "600")


def test_an_expired_permit_answers_only_while_it_held():
    engine = loaded(
        fact(
            "p1",
            "Street closure permit SC-5531 allows the Harbour Road market to close the road.",
            valid_from=at("2024-04-01"),
            valid_to=at("2024-10-01"),
            recorded_at=at("2024-04-01"),
        ),
        fact("d1", "Street closure permit SC-5513 allows the Mill Lane fair to close the road."),
    )
    question = "Which permit lets the Harbour Road market close the road?"
    assert abstained(ask(engine, question))
    assert said(ask_at(engine, question, at("2024-06-15")), "SC-5531")
