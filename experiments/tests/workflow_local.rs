//! `scripts/workflow-local.py`, the runner of a workflow's job on this machine: its expressions,
//! step outputs, `if:` conditions and exit codes on a fixture workflow, and the two real
//! workflows (rdma-testbed.yml run for real where there is no RDMA device, ci.yml as a dry run).

mod common;

use common::{output_text as text, tmpdir};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn run(workflow: &Path, args: &[&str], work: &Path) -> Output {
    Command::new("python3")
        .arg(repo().join("scripts/workflow-local.py"))
        .arg(workflow)
        .args(args)
        .arg("--workdir")
        .arg(work.join("repo"))
        .output()
        .expect("python3 runs")
}

/// A throwaway git repository holding `workflow` as .github/workflows/w.yml.
fn fixture(tag: &str, workflow: &str) -> (PathBuf, PathBuf) {
    let dir = tmpdir(tag);
    let src = dir.join("src");
    std::fs::create_dir_all(src.join(".github/workflows")).unwrap();
    let file = src.join(".github/workflows/w.yml");
    std::fs::write(&file, workflow).unwrap();
    let git = |args: &[&str]| {
        let ok = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .current_dir(&src)
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q"]);
    git(&["add", "."]);
    git(&["commit", "-q", "-m", "fixture"]);
    (dir, file)
}

const FIXTURE: &str = r#"
name: fixture
on: push
jobs:
  one:
    runs-on: ubuntu-latest
    env:
      WHO: ${{ vars.WHO || 'nobody' }}
    steps:
      - uses: actions/checkout@0000000000000000000000000000000000000000
      - name: probe
        id: probe
        run: |
          test -f .github/workflows/w.yml
          echo "flag=yes" >> "$GITHUB_OUTPUT"
          echo "who is $WHO" | tee -a "$GITHUB_STEP_SUMMARY"
      - name: taken
        if: steps.probe.outputs.flag == 'yes' && !(env.WHO == 'nobody')
        run: echo "taken by $WHO"
      - name: not taken
        if: steps.probe.outputs.flag != 'yes'
        run: echo "must not run"
      - name: fails
        run: exit 7
      - name: after a failure
        run: echo "must not run either"
      - name: cleanup
        if: always()
        run: echo "cleanup ran"
"#;

#[test]
fn a_fixture_job_runs_its_steps_with_outputs_conditions_and_a_failure() {
    let (dir, wf) = fixture("wl-fixture", FIXTURE);
    let o = run(&wf, &["--var", "WHO=alice"], &dir.join("a"));
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(t.contains("who is alice"), "{t}");
    assert!(t.contains("taken by alice"), "{t}");
    assert!(!t.contains("must not run"), "{t}");
    assert!(t.contains("not taken: skipped"), "{t}");
    assert!(t.contains("after a failure: skipped"), "{t}");
    assert!(t.contains("cleanup ran"), "{t}");
    assert!(t.contains("FAILED: step 5 (fails): exit 7"), "{t}");

    // the default in `vars.WHO || 'nobody'` makes `taken`'s condition false
    let o = run(&wf, &[], &dir.join("b"));
    let t = text(&o);
    assert!(t.contains("who is nobody"), "{t}");
    assert!(t.contains("taken: skipped"), "{t}");
}

#[test]
fn a_job_that_needs_another_is_refused_rather_than_run_alone() {
    let (dir, wf) = fixture(
        "wl-needs",
        "jobs:\n  a:\n    runs-on: x\n    steps:\n      - run: echo a\n  b:\n    needs: a\n    runs-on: x\n    steps:\n      - run: echo b\n",
    );
    let o = run(&wf, &["--job", "b"], &dir.join("a"));
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(t.contains("needs"), "{t}");
}

#[test]
fn an_action_it_cannot_stand_in_for_is_refused() {
    let (dir, wf) = fixture(
        "wl-unknown",
        "jobs:\n  j:\n    runs-on: x\n    steps:\n      - uses: someone/deploy@v1\n      - run: echo never\n",
    );
    let o = run(&wf, &[], &dir.join("a"));
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(t.contains("someone/deploy@v1"), "{t}");
    assert!(!t.contains("never\n"), "{t}");
}

#[test]
fn the_rdma_testbed_workflow_skips_cleanly_without_a_device() {
    let active = std::fs::read_dir("/sys/class/infiniband")
        .map(|d| d.count() > 0)
        .unwrap_or(false);
    if active {
        eprintln!("skipped: this machine has an RDMA device, where the workflow would run the whole testbed job");
        return;
    }
    let o = run(
        &repo().join(".github/workflows/rdma-testbed.yml"),
        &[],
        &tmpdir("wl-rdma-testbed"),
    );
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(
        t.contains("no active RDMA port under /sys/class/infiniband: skipped"),
        "{t}"
    );
    let skipped = t
        .lines()
        .filter(|l| l.starts_with("== step ") && l.contains(": skipped (if:"))
        .count();
    assert_eq!(skipped, 3, "{t}");
    // the libfabric job runs only where SYNCBENCH_OFI_TESTBEDS lists fabrics
    assert!(t.contains("testbed: passed; ofi: skipped"), "{t}");
}

/// The libfabric job's matrix from the repository variable, one run per entry: a provider
/// this machine's libfabric does not offer skips its steps, saying so.
#[test]
fn the_libfabric_matrix_runs_one_job_per_fabric_and_skips_a_missing_provider() {
    let o = run(
        &repo().join(".github/workflows/rdma-testbed.yml"),
        &[
            "--job",
            "ofi",
            "--var",
            r#"SYNCBENCH_OFI_TESTBEDS=[{"fabric": "a", "provider": "no-such-provider"}, {"fabric": "b", "provider": "no-such-provider-either"}]"#,
        ],
        &tmpdir("wl-ofi-matrix"),
    );
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(t.contains("libfabric no-such-provider on a"), "{t}");
    assert!(t.contains("libfabric no-such-provider-either on b"), "{t}");
    assert!(
        t.contains("no no-such-provider provider (fi_info -t FI_EP_RDM -c FI_RMA): skipped"),
        "{t}"
    );
    assert_eq!(t.matches("job ofi passed").count(), 2, "{t}");
}

#[test]
fn the_ci_workflow_runs_ci_run_then_gates_on_the_hosted_baseline() {
    let o = run(
        &repo().join(".github/workflows/ci.yml"),
        &["--dry-run"],
        &tmpdir("wl-ci"),
    );
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    let ci = t.find("bash .ci/run").expect(".ci/run is a step");
    let regress = t
        .find("--baseline baselines/github-hosted.json")
        .expect("regress against the hosted baseline is a step");
    assert!(ci < regress, "{t}");
}
