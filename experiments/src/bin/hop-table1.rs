//! hop-table1: Hop's Table 1 checked by schedule search: for every setting and graph family,
//! the largest iteration gap seen over many seeded random schedules in the simulator, against
//! the table's bound.
//!
//! The experiment is [`experiments::papers::hop::table1`], compiled once in the library.

fn main() -> std::process::ExitCode {
    experiments::papers::hop::table1::main()
}
