"""The names both sides of the test process share, defined once: the variables the gate sets
in it, the modules its files are copied as, the files it writes there.

Standard library only (nothing imported at all): the runner copies this file as
`entropy_gate_protocol.py` beside every testproc module that reads it (COPIES), and the gate
imports it as `entropy_action.testproc.protocol`. The scan reads GATE_ENV and PIN_ENV (a test
may not write them); the runner sets what GATE_SET_ENV lists and nothing else.
"""

from __future__ import annotations

# --- the pins' variables ------------------------------------------------------------------

HASH_SEED_ENV = "PYTHONHASHSEED"  # always set: the pin, else host A 0 and host B its own
CLOCK_UNIX_ENV = "ENTROPY_CLOCK_UNIX"
RNG_SEED_ENV = "ENTROPY_RNG_SEED"
CASSETTE_SHA256_ENV = "ENTROPY_CASSETTE_SHA256"
CASSETTE_ENV = "ENTROPY_CASSETTE"  # the cassette's path in the tree the tests run in
TEMP_ENV = ("TMPDIR", "TEMP", "TMP")
LANG_ENV = ("LANG", "LC_ALL")
# gettext's own list of languages, read before LC_ALL (by Python's gettext always, by GNU
# gettext outside the C locale): where the gate sets the locale it is unset, unless pinned.
LANGUAGE_ENV = "LANGUAGE"
TZ_ENV = "TZ"
# The prefix of the gate's own variables (its pins, its controls): production code that reads
# one follows the pin under the gate only (the audit records such reads by name).
GATE_PREFIX = "ENTROPY_"

# pin (a key of Pins.flat()) -> the variables the runner sets from it. `env.NAME` pins set
# NAME itself, and are not listed.
PIN_ENV: dict[str, tuple[str, ...]] = {
    "hash_seed": (HASH_SEED_ENV,),  # the runner always sets it, pinned or not
    "tz": (TZ_ENV,),
    "lang": LANG_ENV,
    "clock_unix": (CLOCK_UNIX_ENV,),
    "rng_seed": (RNG_SEED_ENV,),
    "temp_root": TEMP_ENV,
    "cassette_sha256": (CASSETTE_SHA256_ENV,),
    "cassette": (CASSETTE_ENV,),
}
ALWAYS_PINNED = frozenset(PIN_ENV["hash_seed"])

# --- the gate's own control variables -----------------------------------------------------

PLUGIN_ENV = "ENTROPY_GATE_PLUGIN"  # the plugin's config file (plugin.json); the plugin pops it
CHILD_ENV = "ENTROPY_GATE_CHILD"  # host B: what childsite applies in the tests' children (JSON)
AUDIT_ENV = "ENTROPY_GATE_AUDIT"  # the audit's config file (audit-config.json); the audit pops it
GATE_HOST_ENV = "ENTROPY_GATE_HOST"  # "a" or "b": the user's seams plugin is active under us
LOCK_ENV = "ENTROPY_GATE_LOCK"  # "1" on host B unless its network is kept: seams locks it
MARKER_ENV = "ENTROPY_GATE_RUN"  # a fresh token per run: finds what the tests left running
PROBE_ENV = "ENTROPY_GATE_PROBE"  # the mutation probe's config file (probe-config.json)
GATE_ENV = frozenset(
    {PLUGIN_ENV, CHILD_ENV, AUDIT_ENV, GATE_HOST_ENV, LOCK_ENV, MARKER_ENV, PROBE_ENV}
)

# pytest's own configuration from the caller's shell: never passed to a test process, on either
# host, since it could select tests or plugins on one host only (host B's scrub would drop it
# and host A keep it: a plugin loaded on one host only, a difference no pin names)
PYTEST_CONFIG_ENV = ("PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTEST_DISABLE_PLUGIN_AUTOLOAD")

# --- the process's own variables the gate sets (a test may change these) ------------------

PATH_ENV = "PYTHONPATH"  # the plugin's folder first (host B: the childsite's folder last)
HOME_ENV = "HOME"  # host B: a fresh empty directory
PROFILE_ENV = "USERPROFILE"  # host B on Windows: the same directory
HYPOTHESIS_DIR_ENV = "HYPOTHESIS_STORAGE_DIRECTORY"  # set by the plugin, in the test process
FAKETIME_ENV = ("LD_PRELOAD", "FAKETIME", "FAKETIME_DONT_FAKE_MONOTONIC")  # host B's libfaketime
PROCESS_ENV = frozenset({PATH_ENV, HOME_ENV, PROFILE_ENV, HYPOTHESIS_DIR_ENV, *FAKETIME_ENV})

# What a test may not write (the scan, rule 4): GATE_ENV always, a pin's variables (PIN_ENV)
# when it is pinned. What the gate sets in the test process: GATE_SET_ENV, and the manifest's
# `env.NAME` pins.
GATE_SET_ENV = frozenset(
    {name for names in PIN_ENV.values() for name in names} | GATE_ENV | PROCESS_ENV
)

# --- the modules the files are copied as, and where -----------------------------------------

PLUGIN_MODULE = "entropy_gate_plugin"
BOOT_MODULE = "entropy_gate_boot"  # written by the runner: imports the run's plugins
AUDIT_MODULE = "entropy_gate_audit"
WRAPPERS_MODULE = "entropy_gate_wrappers"  # wrappers.py: the audit's 3.10-3.11 mechanism
ASSERTCOUNT_MODULE = "entropy_gate_assertcount"
PROBE_MODULE = "entropy_gate_probe"
NSINIT_MODULE = "entropy_gate_nsinit"  # run as a script: `python -I -S entropy_gate_nsinit.py`
PROTOCOL_MODULE = "entropy_gate_protocol"
NETBLOCK_MODULE = "entropy_gate_netblock"  # netblock.py: the plugin imports it
VOCABULARY_MODULE = "entropy_gate_vocabulary"  # vocabulary.py: assertcount imports it
LISTING_MODULE = "entropy_gate_listing"  # listing.py: host B's listing order and CPU count
FILETIMES_MODULE = "entropy_gate_filetimes"  # filetimes.py: host B's clock on file times
PROVENANCE_MODULE = "entropy_gate_provenance"  # provenance.py: the plugin registers it
HOOKINVENTORY_MODULE = "entropy_gate_hookinventory"  # hookinventory.py: the plugin imports it
ORDER_MODULE = "entropy_gate_order"  # order.py: host B's test order, the plugin registers it
DATAFILES_MODULE = "entropy_gate_datafiles"  # datafiles.py: the data files the tests open
CHILDSITE_MODULE = "sitecustomize"  # every Python child on host B runs it at start-up

PLUGIN_FOLDER = "plugin"  # first on the test process's PYTHONPATH
CHILDSITE_FOLDER = "childsite"  # last on host B's PYTHONPATH
PROBE_FOLDER = "probe"  # the mutation runs' folder (strength.mutation.harness)

# The copy list: (source file in testproc/, module it is copied as, folders it goes into).
COPIES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("protocol.py", PROTOCOL_MODULE, (PLUGIN_FOLDER, CHILDSITE_FOLDER, PROBE_FOLDER)),
    ("plugin.py", PLUGIN_MODULE, (PLUGIN_FOLDER, PROBE_FOLDER)),
    ("audit.py", AUDIT_MODULE, (PLUGIN_FOLDER,)),
    ("wrappers.py", WRAPPERS_MODULE, (PLUGIN_FOLDER,)),  # the audit's
    ("netblock.py", NETBLOCK_MODULE, (PLUGIN_FOLDER, PROBE_FOLDER)),  # the plugin's block
    ("assertcount.py", ASSERTCOUNT_MODULE, (PLUGIN_FOLDER,)),
    ("vocabulary.py", VOCABULARY_MODULE, (PLUGIN_FOLDER,)),  # what assertcount counts
    ("hookinventory.py", HOOKINVENTORY_MODULE, (PLUGIN_FOLDER, PROBE_FOLDER)),  # the plugin's
    ("nsinit.py", NSINIT_MODULE, (PLUGIN_FOLDER,)),
    ("listing.py", LISTING_MODULE, (PLUGIN_FOLDER, PROBE_FOLDER)),  # the plugin's (host B)
    ("filetimes.py", FILETIMES_MODULE, (PLUGIN_FOLDER, PROBE_FOLDER)),  # the plugin's (host B)
    ("provenance.py", PROVENANCE_MODULE, (PLUGIN_FOLDER, PROBE_FOLDER)),  # the plugin's
    ("order.py", ORDER_MODULE, (PLUGIN_FOLDER, PROBE_FOLDER)),  # the plugin's test order
    ("datafiles.py", DATAFILES_MODULE, (PLUGIN_FOLDER, PROBE_FOLDER)),  # the plugin's
    ("childsite.py", CHILDSITE_MODULE, (CHILDSITE_FOLDER,)),
    ("probe.py", PROBE_MODULE, (PROBE_FOLDER,)),
)


def copies(folder: str) -> list[tuple[str, str]]:
    """(source file, module name) of every file copied into `folder`."""
    return [(source, module) for source, module, folders in COPIES if folder in folders]


# --- the pytest option, the config fields and the files the test process writes -------------

ASSERTION_HOOK_INI = "enable_assertion_pass_hook"  # turned on with `-o` where counts are read
CHANNEL_FD_FIELD = "channel_fd"  # plugin.json: the pipe's write end the plugin reports down
PLUGIN_CONFIG_FILE = "plugin.json"
AUDIT_CONFIG_FILE = "audit-config.json"
PROBE_CONFIG_FILE = "probe-config.json"
REPORT_FILE = "report.json"  # the plugin's report of what the test process saw
IMPORTS_FILE = "imports.json"  # the plugin's report of where the code under test came from
PROVENANCE_FILE = "provenance.json"  # provenance.py: where the units under test came from
DATA_FILE = "test-data.json"  # datafiles.py: the data files the tests opened
HOOKS_FILE = "hooks.json"  # the plugin's hook and plugin inventory (hookinventory.py)
AUDIT_JSON = "audit.json"  # the audit's live-entropy reads
CHILDREN_FILE = "children.jsonl"  # one line per Python child on host B (childsite)
NSINIT_RESULT = "nsinit.json"  # nsinit's exit status of pytest and what it killed
PROBE_REPORT_FILE = "probe.json"
HYPOTHESIS_DIR = "hypothesis"  # the private example database's folder


# pytest-randomly shuffles the tests and reseeds `random` from a seed of its own each session:
# an unpinned order and an unpinned seed on host A itself. The gate owns both (host B's seeded
# shuffle, each test seeded by pytest-randomly's own derivation from rng_seed), so every run
# it starts blocks the plugin; blocking a plugin that is not installed does nothing.
BLOCKED_PLUGINS = ("-p", "no:randomly")
