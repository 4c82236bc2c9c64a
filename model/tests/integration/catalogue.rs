//! The catalogue (`model/src/config/catalogue.rs`) is the one place a configuration's facts are
//! kept: every preset has an entry and every entry loads, CI's presets are pinned, the tables of
//! `docs/model.md` are the catalogue's, and `scripts/scheduled-checks.sh` asks it what to run.

use rebalance_model::config::catalogue::{update_tables, How, CATALOGUE};
use rebalance_model::config::presets::{ci_preset_names, load, preset_names};

fn repo(path: &str) -> String {
    format!("{}/../{path}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn every_preset_has_one_entry_and_every_entry_loads() {
    for name in preset_names() {
        let n = CATALOGUE.iter().filter(|e| e.name == name).count();
        assert_eq!(n, 1, "preset {name} has {n} entries in the catalogue");
    }
    for e in CATALOGUE {
        let arg = e.config_arg();
        let path = repo(&arg);
        let loaded = if e.is_file() { load(&path) } else { load(&arg) };
        assert!(loaded.is_ok(), "{}: {:?}", e.name, loaded.err());
        assert!(
            e.ci || e.scheduled || !e.caught.is_empty(),
            "{}: nothing runs it",
            e.name
        );
    }
}

#[test]
fn what_ci_checks_whole_is_pinned_and_documented() {
    for name in ci_preset_names().into_iter().chain(["tiny"]) {
        let e = CATALOGUE.iter().find(|e| e.name == name).unwrap();
        assert!(e.ci, "{name}: CI checks it whole, the catalogue says not");
    }
    for e in CATALOGUE.iter().filter(|e| e.ci) {
        assert!(
            e.states.is_some(),
            "{}: CI checks it but pins no states",
            e.name
        );
        assert!(
            e.what.is_some(),
            "{}: no row in the CI presets' table",
            e.name
        );
        assert!(!e.is_file(), "{}: CI checks presets", e.name);
    }
    for e in CATALOGUE.iter().filter(|e| e.cycle_bound.is_some()) {
        assert!(
            e.ci,
            "{}: a cycle bound for what CI does not search",
            e.name
        );
    }
    for e in CATALOGUE {
        for c in e
            .caught
            .iter()
            .filter(|c| matches!(c.how, How::OnAFairCycle { .. }))
        {
            assert_eq!(
                c.switches.len(),
                1,
                "{}: a livelock row names one switch",
                e.name
            );
        }
    }
}

#[test]
fn the_documents_tables_are_the_catalogues() {
    let path = repo("docs/model.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let generated = update_tables(&text).unwrap_or_else(|why| panic!("docs/model.md: {why}"));
    assert!(
        generated == text,
        "docs/model.md's tables differ from the catalogue: run `cargo run --release -p \
         rebalance-model -- catalogue --update-docs docs/model.md`"
    );
}

#[test]
fn the_scheduled_checks_ask_the_catalogue() {
    let script = std::fs::read_to_string(repo("scripts/scheduled-checks.sh")).unwrap();
    for asks in ["catalogue --scheduled", "catalogue --bounded"] {
        assert!(
            script.contains(asks),
            "scripts/scheduled-checks.sh does not run `{asks}`"
        );
    }
    // And lists no configuration of its own.
    for e in CATALOGUE
        .iter()
        .filter(|e| e.scheduled || e.cycle_bound.is_some())
    {
        let listed = script
            .lines()
            .filter(|l| !l.trim_start().starts_with('#'))
            .any(|l| {
                l.split_whitespace()
                    .any(|w| w == e.name || w == e.config_arg())
            });
        assert!(
            !listed,
            "scripts/scheduled-checks.sh lists {} itself",
            e.name
        );
    }
}
