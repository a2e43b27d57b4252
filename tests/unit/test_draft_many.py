"""`draft.draft_many`: one property per module, shared pins at the top, the draft validates
(pinfile.parse_file) in every shape; and its refusals."""

from __future__ import annotations

import pytest

from entropy_action.core.errors import GateError
from entropy_action.core.hostinfo import AuditRecord
from entropy_action.manifest import draft, pinfile

CLOCK = 1_768_003_200


def read(api: str, line: int = 3, name: str | None = None) -> AuditRecord:
    return AuditRecord(api=api, name=name, path="lib.py", line=line, test="t", count=1)


def audited(module: str, *records: AuditRecord, **fields: object) -> draft.Audited:
    return draft.Audited(module, records, f"/tmp/entropy-{draft.property_id(module)}", **fields)  # type: ignore[arg-type]


def parsed(result: draft.Draft) -> pinfile.LoadedFile:
    return pinfile.parse_file(result.text.encode(), "entropy.yaml")


def pins(loaded: pinfile.LoadedFile) -> dict[str, dict[str, object]]:
    return {v.property_id: v.manifest.pins.model_dump(exclude_none=True) for v in loaded.views}


def test_a_pin_every_module_drafts_alike_is_shared_and_said_once():
    result = draft.draft_many(
        [
            audited("tests/test_a.py", read("time.time()"), read("random.randint()")),
            audited("tests/test_b.py", read("time.time()"), read("datetime.now()", 5)),
        ],
        CLOCK,
    )
    loaded = parsed(result)
    assert loaded.many
    assert pins(loaded) == {
        "a": {"clock_unix": CLOCK, "rng_seed": pins(loaded)["a"]["rng_seed"]},
        "b": {"clock_unix": CLOCK, "tz": "UTC"},
    }
    assert result.text.count("clock_unix:") == 1
    assert result.pins == ["clock_unix", "a: rng_seed", "b: tz"]
    assert result.properties == ["a", "b"]


def test_without_a_shared_pin_there_is_no_top_level_pins():
    result = draft.draft_many(
        [audited("tests/test_a.py", read("random.random()")), audited("tests/test_b.py")], CLOCK
    )
    assert "\npins:" not in result.text
    assert set(pins(parsed(result))["b"]) == {"tz"}  # the fallback pin, in its entry


def test_every_module_without_reads_shares_the_fallback_pin():
    result = draft.draft_many([audited("tests/test_a.py"), audited("tests/test_b.py")], CLOCK)
    assert (
        "\npins:\n  # no live read was seen; a manifest needs one pin\n  tz: UTC\n" in result.text
    )
    assert pins(parsed(result)) == {"a": {"tz": "UTC"}, "b": {"tz": "UTC"}}


def test_notes_env_and_no_coverage_go_in_the_modules_entry():
    tz_set = {"TZ": "tests/test_b.py:3 sets TZ at import (`os.environ['TZ'] = …`)"}
    result = draft.draft_many(
        [
            audited("tests/test_a.py", read("time.time()"), no_coverage=True),
            audited(
                "tests/test_b.py",
                read("time.time()"),
                read("datetime.now()"),
                read("os.environ", 4, "APP_HOME"),
                set_by_tests=tz_set,
            ),
        ],
        CLOCK,
    )
    loaded = parsed(result)
    assert loaded.view("a").manifest.run.pytest_args == ["--no-cov"]  # type: ignore[union-attr]
    assert loaded.view("b").manifest.run.pytest_args == []  # type: ignore[union-attr]
    assert "    #   APP_HOME: <the value the property needs>\n" in result.text
    assert result.notes[0] == "a: run.pytest_args: " + draft.NO_COVERAGE
    assert result.notes[1].startswith("b: tz: not pinned: tests/test_b.py:3 sets TZ")
    assert "b: env.APP_HOME: not pinned" in result.notes[2]


def test_a_module_path_yaml_would_misread_is_quoted():
    module = "tests/test_a #1: x.py"
    result = draft.draft_many([audited(module), audited("tests/test_b.py")], CLOCK)
    assert [v.manifest.module for v in parsed(result).views] == [module, "tests/test_b.py"]


def test_ids_stay_distinct_when_stems_agree():
    assert draft.property_ids(["tests/x/test_a.py", "tests/y/test_a.py", "tests/test_b.py"]) == [
        "tests_x_test_a",
        "tests_y_test_a",
        "b",
    ]
    assert draft.property_ids(["t/x/test_a.py", "t_x/test_a.py"]) == [
        "t_x_test_a_1",
        "t_x_test_a_2",
    ]
    result = draft.draft_many([audited("tests/x/test_a.py"), audited("tests/y/test_a.py")], CLOCK)
    assert parsed(result).ids == ("tests_x_test_a", "tests_y_test_a")


def test_a_module_named_twice_is_refused():
    with pytest.raises(GateError, match=r"^init: tests/test_a.py is named twice"):
        draft.draft_many([audited("tests/test_a.py"), audited("tests/test_a.py")], CLOCK)


def test_one_module_still_drafts_the_one_property_form():
    result = draft.draft("tests/test_a.py", [read("time.time()")], CLOCK, "/tmp/entropy-a")
    assert "properties:" not in result.text
    assert not parsed(result).many


def env(name: str, line: int) -> AuditRecord:
    return read("os.environ", line, name)


def test_a_line_that_reads_only_the_locale_drafts_lang_and_covers_its_variables():
    gettext = [env(name, 7) for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")]
    result = draft.draft("tests/test_a.py", [*gettext, env("APP_HOME", 9)], CLOCK, "/tmp/e")
    assert result.pins == ["lang"]
    assert parsed(result).views[0].manifest.pins.lang == "C.UTF-8"
    assert [note.split(":")[0] for note in result.notes] == ["env.APP_HOME"]


def test_a_line_that_walks_the_whole_environment_is_no_locale_read():
    """python-dotenv's and environs' tests copy os.environ: LANG is read with every other."""
    walk = [env(name, 302) for name in ("HOME", "LANG", "PATH", "SHELL")]
    result = draft.draft("tests/test_a.py", walk, CLOCK, "/tmp/e")
    assert "lang" not in result.pins
    assert [note.split(":")[0] for note in result.notes] == [
        "env.HOME", "env.LANG", "env.PATH", "env.SHELL"
    ]  # fmt: skip
