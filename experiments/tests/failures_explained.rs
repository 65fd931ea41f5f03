//! Every claim the committed baselines record as failing carries a class and a why in
//! `experiments/failures.toml`, and every entry there still names a claim the baselines know
//! (no explanation outlives its claim). A new failure fails this test until it is explained;
//! `figures explained` checks the same on a fresh `make reproduce-all` in CI.

use experiments::harness::explained::{matches, FailureTable};
use std::path::Path;

/// Every baseline's claim ids and verdicts (`snapshot.claims`).
fn baseline_claims() -> Vec<(String, String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../baselines");
    let mut out = Vec::new();
    for e in std::fs::read_dir(&dir).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_none_or(|x| x != "json") {
            continue;
        }
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        for (id, verdict) in v["snapshot"]["claims"].as_object().unwrap() {
            out.push((
                name.clone(),
                id.clone(),
                verdict.as_str().unwrap().to_string(),
            ));
        }
    }
    assert!(
        !out.is_empty(),
        "no baseline claims under {}",
        dir.display()
    );
    out
}

#[test]
fn every_baseline_failure_is_explained() {
    let table = FailureTable::committed();
    let unexplained: Vec<String> = baseline_claims()
        .into_iter()
        .filter(|(_, id, v)| v == "fail" && table.explanation(id).is_none())
        .map(|(b, id, _)| format!("{id} (fails in baselines/{b})"))
        .collect();
    assert!(
        unexplained.is_empty(),
        "failing claims without a class and why in experiments/failures.toml:\n{}",
        unexplained.join("\n")
    );
}

#[test]
fn every_explanation_names_a_known_claim() {
    let table = FailureTable::committed();
    let claims = baseline_claims();
    let stale: Vec<&str> = table
        .failure
        .iter()
        .filter(|e| !claims.iter().any(|(_, id, _)| matches(&e.claim, id)))
        .map(|e| e.claim.as_str())
        .collect();
    assert!(
        stale.is_empty(),
        "experiments/failures.toml explains claims no baseline has: {stale:?}"
    );
    // bench-scale is not part of `make reproduce-all` (`make bench-scale`), so no baseline
    // holds its claims.
    let outside_reproduce_all = ["bench-scale/"];
    let kinds = &table.kinds;
    let kind_stale: Vec<&str> = [&kinds.harness, &kinds.invariant, &kinds.model]
        .into_iter()
        .flatten()
        .filter(|p| !outside_reproduce_all.contains(&p.as_str()))
        .filter(|p| !claims.iter().any(|(_, id, _)| matches(p, id)))
        .map(String::as_str)
        .collect();
    assert!(
        kind_stale.is_empty(),
        "kind patterns that match no claim: {kind_stale:?}"
    );
}
