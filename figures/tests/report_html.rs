//! `figures report --html` checked in a real browser: a small results folder is rendered and
//! reported, and headless Chromium loads REPORT.html and reports, from inside the page, every
//! image that did not load and every link that does not resolve (an anchor with no element of
//! that id, a file it cannot read). The front page's structure is checked on REPORT.md.
//!
//! Needs Chromium (`chromium`, or the path in SYNCBENCH_CHROMIUM). Without it the browser half
//! is skipped with a message, unless SYNCBENCH_REQUIRE_BROWSER=1 (set by `.ci/run`, which
//! installs Debian's chromium), where its absence fails the test.

use std::path::{Path, PathBuf};
use std::process::Command;

fn tmpdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("figures-html-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn figures(results: &Path, args: &[&str]) {
    let o = Command::new(env!("CARGO_BIN_EXE_figures"))
        .arg("--results")
        .arg(results)
        .args(args)
        .output()
        .expect("figures runs");
    assert!(
        o.status.success(),
        "figures {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Two figures of two papers with results (asap-fig10's gaps, hop-table1's claims alone), a
/// manifest each, and seeds 1-3.
fn results_set(root: &Path) {
    let asap = root.join("asap-fig10");
    std::fs::create_dir_all(asap.join("seeds/2")).unwrap();
    std::fs::create_dir_all(asap.join("seeds/3")).unwrap();
    std::fs::write(
        asap.join("gaps.csv"),
        "nodes,root_expander,chain,malt\n2,1,0.5,1\n3,0.6,0.2,0.5\n4,0.5,0.1,0\n",
    )
    .unwrap();
    std::fs::write(
        asap.join("claims.csv"),
        "claim_id,statement,paper_value,measured_value,verdict,seeds,passes,kind\n\
         asap-fig10/a,expander above chain,every N,3 of 3,pass,3,3,paper\n\
         asap-fig10/b,expander above MALT,most N,1 of 3,fail,3,1,paper\n\
         asap-fig10/c,near the optimum,-,yes,pass,3,3,harness\n",
    )
    .unwrap();
    let hop = root.join("hop-table1");
    std::fs::create_dir_all(&hop).unwrap();
    std::fs::write(
        hop.join("claims.csv"),
        "claim_id,statement,paper_value,measured_value,verdict,seeds,passes,kind\n\
         hop-table1/x,bound reached,Table 1,3 of 3,pass,3,3,paper\n",
    )
    .unwrap();
    for (dir, id, seconds) in [(&asap, "asap-fig10", 12.5), (&hop, "hop-table1", 7.5)] {
        std::fs::write(
            dir.join("manifest.json"),
            format!(
                r#"{{"experiment":"{id}","seed":1,"scale":"quick","driver":"sim","git_revision":"abc123","host":"vm","cpu":"Test CPU, 2 logical CPUs","started_utc":"2026-12-04T04:37:08Z","versions":{{"numeric_platform":"x86_64-linux-gnu","cnn_cpu_level":"avx2"}},"wall_seconds":{seconds},"notes":["a note"],"deviations":[]}}"#
            ),
        )
        .unwrap();
    }
}

/// Chromium's path: SYNCBENCH_CHROMIUM, else the first of Debian's and Ubuntu's names on PATH.
fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("SYNCBENCH_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser"]
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |d| d.join(name)))
        .find(|p| p.is_file())
}

/// The check the page runs on load: images not loaded, anchors with no element, files that
/// cannot be read; written into the DOM for `--dump-dom` to print.
const CHECK: &str = r##"<script>
window.addEventListener("load", function () {
  var bad = [];
  for (const i of document.images) {
    if (!i.complete || i.naturalWidth === 0) bad.push("image " + i.getAttribute("src"));
  }
  for (const a of document.querySelectorAll("a[href]")) {
    var h = a.getAttribute("href");
    if (h.startsWith("#")) {
      if (!document.getElementById(decodeURIComponent(h.slice(1)))) bad.push("anchor " + h);
    } else {
      try {
        var x = new XMLHttpRequest();
        x.open("GET", h, false);
        x.send();
        if (x.status !== 0 && x.status !== 200) bad.push("link " + h + " " + x.status);
      } catch (e) { bad.push("link " + h + " " + e.name); }
    }
  }
  var p = document.createElement("pre");
  p.id = "syncbench-check";
  p.textContent = JSON.stringify({images: document.images.length, links: document.links.length, bad: bad});
  document.body.appendChild(p);
});
</script>"##;

/// What the page's check found: (images, links, what failed).
fn browser_check(browser: &Path, page: &Path) -> (u64, u64, Vec<String>) {
    let html = std::fs::read_to_string(page).unwrap();
    let checked = page.with_file_name("REPORT.check.html");
    std::fs::write(
        &checked,
        html.replace("</body>", &format!("{CHECK}</body>")),
    )
    .unwrap();
    let o = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--allow-file-access-from-files",
            "--virtual-time-budget=10000",
            "--dump-dom",
        ])
        .arg(format!("file://{}", checked.display()))
        .output()
        .expect("chromium runs");
    let dom = String::from_utf8_lossy(&o.stdout);
    let start = dom
        .find("<pre id=\"syncbench-check\">")
        .unwrap_or_else(|| panic!("the page's check did not run: {dom:.2000}"));
    let json = &dom[start + "<pre id=\"syncbench-check\">".len()..];
    let json = &json[..json.find("</pre>").unwrap()];
    let json = json.replace("&quot;", "\"").replace("&amp;", "&");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let bad = v["bad"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b.as_str().unwrap().to_string())
        .collect();
    (
        v["images"].as_u64().unwrap(),
        v["links"].as_u64().unwrap(),
        bad,
    )
}

#[test]
fn the_html_report_loads_every_image_and_resolves_every_link() {
    let root = tmpdir("report");
    results_set(&root);
    figures(&root, &["render"]);
    figures(&root, &["report", "--html"]);
    let md = std::fs::read_to_string(root.join("REPORT.md")).unwrap();
    // The front page opens with the answer, then what ran, then the papers.
    let at = |s: &str| md.find(s).unwrap_or_else(|| panic!("no {s:?} in {md}"));
    assert!(
        at("**The papers' claims: 2 pass, 1 fail, 0 undecided, 0 not exercised, 0 n.a.**")
            < at("## What ran")
    );
    assert!(at("## What ran") < at("## By paper"));
    assert!(at("## By paper") < at("## How to read it"));
    assert!(at("## How to read it") < at("# The figures in detail"));
    assert!(
        md.contains("| seeds | 1-3 (1 figure); 1 (hop-table1);"),
        "{md}"
    );
    assert!(
        md.contains(
            "| machine | host `vm`: Test CPU, 2 logical CPUs; numeric platform `x86_64-linux-gnu`"
        ),
        "{md}"
    );
    assert!(
        md.contains("| time | started 2026-12-04T04:37:08Z; the figures' runs took 20 s"),
        "{md}"
    );
    assert!(
        md.contains("| [ASAP](#asap) | 1 | 1 | 1 | 0 | 0 | 0 | 1 of 1 |"),
        "{md}"
    );
    assert!(
        md.contains("| [Hop](#hop) | 1 | 1 | 0 | 0 | 0 | 0 | 0 of 0 |"),
        "{md}"
    );
    assert!(
        md.contains("- [asap-fig10](#asap-fig10): 1 pass, 1 fail; other checks 1 pass — "),
        "{md}"
    );
    assert!(md.contains("Files: [claims.csv](asap-fig10/claims.csv), [gaps.csv](asap-fig10/gaps.csv), [manifest.json](asap-fig10/manifest.json)."), "{md}");
    let page = root.join("REPORT.html");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("<img src=\"asap-fig10/asap-fig10.png\""),
        "{html:.3000}"
    );
    assert!(html.contains("<h2 id=\"asap-fig10\">"), "{html:.3000}");
    match chromium() {
        Some(browser) => {
            let (images, links, bad) = browser_check(&browser, &page);
            assert_eq!(images, 1, "the one rendered figure");
            assert!(links >= 8, "{links} links");
            assert!(bad.is_empty(), "{bad:?}");
            // The check can fail: a figure's picture removed is an image that does not load,
            // and a link to a missing section one that does not resolve.
            std::fs::remove_file(root.join("asap-fig10/asap-fig10.png")).unwrap();
            let broken = html.replace("](#hop)", "](#nowhere)").replace("href=\"#hop\"", "href=\"#nowhere\"");
            std::fs::write(&page, broken).unwrap();
            let (_, _, bad) = browser_check(&browser, &page);
            assert_eq!(
                bad,
                vec!["image asap-fig10/asap-fig10.png".to_string(), "anchor #nowhere".into()],
                "{bad:?}"
            );
        }
        None if std::env::var_os("SYNCBENCH_REQUIRE_BROWSER").is_some() => {
            panic!("SYNCBENCH_REQUIRE_BROWSER is set and no chromium was found (PATH, SYNCBENCH_CHROMIUM)")
        }
        None => eprintln!(
            "skipped the browser half: no chromium on PATH (apt-get install chromium, or set SYNCBENCH_CHROMIUM)"
        ),
    }
    std::fs::remove_dir_all(&root).unwrap();
}
