"""Claims rules: what a changelog entry or a PR description says, against what runs."""

from __future__ import annotations

from ...findings import Severity, register

FAMILY = "claims"

CLAIM_CONTRADICTED = register(
    "claim-contradicted",
    summary="a changelog claim is false for every job it is about (a PR description's: a warning)",
    what=("Reads the descriptions of the changelog entries a change appends (and the PR description given "
          "with --pr-body), extracts each claim (subject, value, scope) and compares it with the effective "
          "recipe and config values of every job in the claim's scope. Reports a claim that no job in scope "
          "satisfies. A claim of the PR description is reported as a warning: a description is told while "
          "the change is made, and its earlier steps often no longer hold at the head (set `severity:` to make "
          "them errors)."),
    why=("The changelog is the record readers use to explain a result. A description that says one thing "
         "while the recipe runs another misleads everyone who compares results across changes."),
    example=(
        'description:\n'
        '  - "Match the validated DEP run: ... set the state checkpoint interval to 32768 tokens."\n'
        '# while the recipe passes --state-checkpoint-interval-tokens 8192 for every DEP job'
    ),
    fix="Correct the description to say what the recipe runs, or change the recipe to run what the description says.",
    family=FAMILY,
    severity=Severity.ERROR,
)

CLAIM_ARM_MISSING = register(
    "claim-arm-missing",
    summary="a changelog claim names an arm (a topology, an offload tier, a band) no job it is about runs",
    what=("Like claim-contradicted, for a claim whose whole disagreement is that the arm it names, or a "
          "concurrency it gives to an arm, matches no job of its scope: \"add a DEP8 arm at conc 64\" where no "
          "job runs DEP8. Its own rule because it is read less surely than a value: an arm is often named by "
          "a label of the text's own (\"the HiCache L3 arm\", \"1P4D\"), and on pull requests as they were "
          "proposed such findings were true about one time in five (README \"Claims\"), where a contradicted "
          "value was true four times in five. A repository can make it a warning with `severity:`."),
    why=("A sweep the changelog announces and the config does not run is a result readers look for and "
         "never find."),
    example=(
        'description:\n'
        '  - "Add the DEP8 dp-attn band at conc 64-512."\n'
        '# while every job of the key runs TP8 without DP attention'
    ),
    fix="Add the arm to the config, or correct the description to name the arms the config runs.",
    family=FAMILY,
    severity=Severity.ERROR,
)

CLAIM_SETTING_MISSING = register(
    "claim-setting-missing",
    summary="a changelog claim gives a setting a value, and no job it is about sets it at all",
    what=("Like claim-contradicted, for a claim whose whole disagreement is that the flag, variable or key it "
          "names is not set by any job of its scope (not another value: no value). Its own rule because it "
          "is read less surely: the setting is often another program's (an installer's, a launcher's, the "
          "benchmark client's) or set where the recipe does not show it, and on pull requests as they were "
          "proposed none of these findings was true (README \"Claims\"). A repository can make it a warning "
          "with `severity:`."),
    why="A setting the changelog says was applied and that no job passes was never tried.",
    example=(
        'description:\n'
        '  - "Enable --enable-two-batch-overlap for the DEP band."\n'
        '# while no recipe of the key passes --enable-two-batch-overlap'
    ),
    fix="Pass the setting in the recipe, or correct the description.",
    family=FAMILY,
    severity=Severity.ERROR,
)

CLAIM_PARTLY_CONTRADICTED = register(
    "claim-partly-contradicted",
    summary="a claim holds for some jobs in its scope and not for others, or holds but for what a name implies",
    what=("Like claim-contradicted, for a claim that is true for some of the jobs it is about and false for "
          "others; the message names the jobs that differ.  Also an arm whose jobs are as named but for the "
          "\"no DP attention\" a bare TP width implies by convention (\"TP4-prefill\" for a prefill that runs "
          "DP attention): the message says so."),
    why=("A claim stated for a whole config or band that holds only for part of it usually means the "
         "sentence needs a narrower scope, or one branch of the recipe was missed."),
    example=(
        'description:\n'
        '  - "Set --max-num-seqs to twice the concurrency."\n'
        '# the DEP branch of the recipe passes --max-num-seqs $CONC'
    ),
    fix="Name the band the claim is about (\"on the TP band\", \"c48 and above\") or make every job in scope agree.",
    family=FAMILY,
    severity=Severity.WARNING,
)

CLAIM_UNDOCUMENTED_CHANGE = register(
    "claim-undocumented-change",
    summary="a change alters what jobs run, and no appended description mentions it",
    what=("Compares each job's effective recipe values (server flags, exported env) and config fields between "
          "the base and the head revision; a changed value that no appended changelog description mentions "
          "(by identifier, by derived words, or by its new value) is reported."),
    why=("Results change when settings change. A setting changed silently cannot be found later from the "
         "changelog, which is the reason the changelog exists."),
    example=(
        '# recipe: MAX_NUM_SEQS=$((2 * CONC)) -> MAX_NUM_SEQS=$CONC\n'
        'description:\n'
        '  - "Bump the image."'
    ),
    fix="Mention the change in the appended entry's description.",
    family=FAMILY,
    severity=Severity.WARNING,
)

CLAIM_UNVERIFIED = register(
    "claim-unverified",
    summary="a phrase that looks like a claim but cannot be tied to one subject and value (--verbose only)",
    what=("Listed only with --verbose: phrases naming a setting without a value, a name no recipe in scope "
          "sets, or words that fit several subjects. They are not checked."),
    why="Ambiguity is resolved towards silence; the list shows what the checker did not verify.",
    example='description:\n  - "Tune the batching."',
    fix="Nothing to fix; name the setting and its value if it should be checked.",
    family=FAMILY,
    severity=Severity.NOTE,
)

CLAIM_NOT_CHECKED = register(
    "claim-not-checked",
    summary="the recipe claims of an entry could not be checked: no job in its scope was evaluated",
    what=("Reported for an added changelog entry when no job it is about has a recipe the checker could "
          "evaluate: its config-keys select no job, no job's recipe is in the repository (an external "
          "srt-slurm recipe, a deleted script), or every evaluation failed. Image, parallelism and "
          "concurrency claims are still checked against the configs."),
    why=("A claims check that found nothing to compare must not look like one that found nothing wrong."),
    example=('- config-keys:\n    - dsv4-fp4-gb200-dynamo-vllm\n  description:\n'
             '    - "Lower decode gpu-memory-utilization to 0.85."\n'
             '# the job\'s recipe is cloned by the launcher at run time'),
    fix="Nothing to fix in the entry; read the recipe the entry describes by hand, or add it to the repository.",
    family=FAMILY,
    severity=Severity.NOTE,
)


# The rules of a claim the jobs disagree with, whole or in part: what a measure of the claims checker scores.
DISAGREEMENT_RULES = (CLAIM_CONTRADICTED.id, CLAIM_ARM_MISSING.id, CLAIM_SETTING_MISSING.id,
                      CLAIM_PARTLY_CONTRADICTED.id)
