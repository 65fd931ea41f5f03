//! `figures`: renders result CSVs to SVG and PNG, and writes `results/REPORT.md`.
//!
//! It reads only CSV (and each figure's manifest.json for the report), so figures can be
//! regenerated without re-running experiments.

mod bands;
mod chart;
mod failures;
mod figs;
mod front_page;
mod group;
mod html;
mod layout_check;
mod learning;
mod reference;
mod report;
mod table;
mod theme;

use anyhow::{bail, Result};
use clap::{Parser, Subcommand};
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    name = "figures",
    version,
    about = "Render syncbench results to SVG/PNG and write REPORT.md"
)]
struct Cli {
    /// Results root written by the experiment binaries.
    #[arg(long, default_value = "results", global = true)]
    results: PathBuf,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Render figures: every figure with results present, or only --figure.
    Render {
        /// A figure id such as asap-fig3; default: all present.
        #[arg(long)]
        figure: Option<String>,
    },
    /// Write <results>/REPORT.md: what ran and the papers' claims by paper first, then the
    /// failures grouped by class, then every figure with the paper beside the measured values
    /// and all its claims.
    Report {
        /// Also write <results>/REPORT.html, the same report as one page with the figures
        /// inline (open it in a browser from the results folder).
        #[arg(long)]
        html: bool,
    },
    /// Check that every failing claim under --results carries a class and a why (from
    /// experiments/failures.toml): lists the unexplained ones and exits non-zero if any.
    Explained,
    /// Check the layout of every rendered figure under --results (or only --figure): no text
    /// outside the canvas, no two texts overlapping, each series in one colour in every panel.
    /// Lists what it finds per figure and exits non-zero if anything.
    CheckLayout {
        /// A figure id such as hop-table1; default: every figure rendered.
        #[arg(long)]
        figure: Option<String>,
    },
    /// List the figure ids this tool can render.
    List,
}

fn main() -> std::process::ExitCode {
    // A closed output pipe (`figures list | head`) ends the process quietly, as it does `cat`,
    // instead of a panic at the next println!: Rust's runtime ignores SIGPIPE.
    // SAFETY: signal(2) with SIG_DFL installs no handler; called before any other thread.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> Result<()> {
    let cli = Cli::parse();
    chart::register_fonts()?;
    match cli.command {
        Command::List => {
            for f in figs::ALL.iter().chain(figs::BENCHES) {
                println!("{:<20} {}", f.id, f.title);
            }
        }
        Command::Render { figure } => {
            let selected: Vec<&figs::FigureDef> = match &figure {
                Some(id) => match figs::find(id) {
                    Some(f) => vec![f],
                    None => bail!(
                        "unknown figure '{id}'; known: {}",
                        figs::ALL
                            .iter()
                            .chain(figs::BENCHES)
                            .map(|f| f.id)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                },
                None => figs::ALL.iter().chain(figs::BENCHES).collect(),
            };
            let mut rendered = 0;
            for f in selected {
                let dir = cli.results.join(f.id);
                if !dir.join("claims.csv").exists() {
                    if figure.is_some() {
                        bail!(
                            "no results for {} in {} (run its experiment first, e.g. make fig-{})",
                            f.id,
                            dir.display(),
                            f.id
                        );
                    }
                    continue;
                }
                // A run that only wrote claims (e.g. not applicable in this build) has nothing
                // to draw.
                let has_data = std::fs::read_dir(&dir).is_ok_and(|rd| {
                    rd.flatten().any(|e| {
                        let name = e.file_name();
                        let name = name.to_string_lossy();
                        name.ends_with(".csv") && name != "claims.csv"
                    })
                });
                if !has_data {
                    eprintln!("{}: no data to draw (see its claims)", f.id);
                    rendered += 1;
                    continue;
                }
                figs::draw(f, &dir)?;
                eprintln!("rendered {}/{}.svg and .png", dir.display(), f.id);
                for d in layout_check::check_file(&dir.join(format!("{}.svg", f.id)))? {
                    eprintln!("warning: {}: layout: {d}", f.id);
                }
                rendered += 1;
            }
            if rendered == 0 {
                bail!("no results found under {}", cli.results.display());
            }
        }
        Command::CheckLayout { figure } => {
            let ids: Vec<&str> = match &figure {
                Some(id) => vec![figs::find(id)
                    .map(|f| f.id)
                    .ok_or_else(|| anyhow::anyhow!("unknown figure '{id}'"))?],
                None => figs::ALL
                    .iter()
                    .chain(figs::BENCHES)
                    .map(|f| f.id)
                    .collect(),
            };
            let (mut checked, mut defects) = (0, 0);
            for id in ids {
                let svg = cli.results.join(id).join(format!("{id}.svg"));
                if !svg.exists() {
                    if figure.is_some() {
                        bail!(
                            "{} is not rendered (run figures render first)",
                            svg.display()
                        );
                    }
                    continue;
                }
                let found = layout_check::check_file(&svg)?;
                for d in &found {
                    println!("{id}: {d}");
                }
                checked += 1;
                defects += found.len();
            }
            if checked == 0 {
                bail!("no rendered figures under {}", cli.results.display());
            }
            if defects > 0 {
                bail!("layout check failed: {defects} defect(s) in {checked} figure(s) checked");
            }
            eprintln!("{checked} figures: no layout defects");
        }
        Command::Explained => {
            let n = failures::check(&cli.results)?;
            eprintln!("all {n} failing claims are explained");
        }
        Command::Report { html } => {
            let path = report::write(&cli.results, html)?;
            eprintln!("wrote {}", path.display());
            if html {
                eprintln!("wrote {}", path.with_extension("html").display());
            }
        }
    }
    Ok(())
}
