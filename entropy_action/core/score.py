"""The mutation score at the base and at the head, as a value the verdict carries."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class Survivor(BaseModel):
    """A mutant one module kills and the other lets survive."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mutant: str = Field(description="`path:line: before → after`")
    path: str
    line: int
    test: str = Field(description="The test that kills it (in the module that does)")


class MutationScore(BaseModel):
    """How many mutants of the exercised code each module kills (same mutants, same code)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mode: str = Field(description="constraints.mutation: changed or all")
    mutants: int = Field(description="Mutants run and counted (timed-out ones are not)")
    base_killed: int
    head_killed: int
    weakened: list[Survivor] = Field(
        default_factory=list, description="Killed by the base's module, surviving the head's"
    )
    strengthened: list[Survivor] = Field(
        default_factory=list, description="Surviving the base's module, killed by the head's"
    )
    not_counted: int = Field(0, description="Mutants timed out or left out by the time budget")

    def render(self) -> str:
        """`base kills 14/16 mutants, head kills 9/16`."""
        return (
            f"base kills {self.base_killed}/{self.mutants} mutants, "
            f"head kills {self.head_killed}/{self.mutants}"
        )
