//! The rules of `spec/protocol.md` section 5 as data: one enum, its labels, and a bit set of the
//! rules a step fired. Coverage lists derive from [`Rule::ALL`], so a rule cannot be forgotten
//! by one list and remembered by another.

use serde::{Serialize, Serializer};
use std::fmt;

/// A rule, or a numbered case of one (`R7_4` is case 4 of R7's decision table).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Rule {
    R1,
    R2,
    R3,
    R4,
    /// R4's cases: a deleted bucket, a no-op, a leader-only entry, a move.
    R4_1,
    R4_2,
    R4_3,
    R4_4,
    R5,
    R6,
    R7,
    R7_1,
    R7_2,
    R7_3,
    R7_4,
    R7_5,
    /// A store failure inside a step. No code fires it: a step exercises it exactly when one
    /// of its store operations failed.
    R8,
    R9,
    R10,
    R11,
    R12,
    R13,
    R14,
    /// R14's steps, each where it acts: the deleted bucket completed (1), the cancel at origin
    /// (1b), progress seen (2: a new observation), the give-up (3), the next reconcile scheduled
    /// (4) and the action (5).
    R14_1,
    R14_1b,
    R14_2,
    R14_3,
    R14_4,
    R14_5,
    R15,
    R16,
    R17,
    R18,
    R19,
    R20,
    R21,
    R22,
    R23,
    /// R23's parts, each where it enqueues: a Timeout (1), a Reconcile (2), a Finalize (3), a
    /// Recover (4); and (5) the retry of failed liveness and deletion writes.
    R23_1,
    R23_2,
    R23_3,
    R23_4,
    R23_5,
    R24,
}

impl Rule {
    pub const ALL: [Rule; 44] = [
        Rule::R1,
        Rule::R2,
        Rule::R3,
        Rule::R4,
        Rule::R4_1,
        Rule::R4_2,
        Rule::R4_3,
        Rule::R4_4,
        Rule::R5,
        Rule::R6,
        Rule::R7,
        Rule::R7_1,
        Rule::R7_2,
        Rule::R7_3,
        Rule::R7_4,
        Rule::R7_5,
        Rule::R8,
        Rule::R9,
        Rule::R10,
        Rule::R11,
        Rule::R12,
        Rule::R13,
        Rule::R14,
        Rule::R14_1,
        Rule::R14_1b,
        Rule::R14_2,
        Rule::R14_3,
        Rule::R14_4,
        Rule::R14_5,
        Rule::R15,
        Rule::R16,
        Rule::R17,
        Rule::R18,
        Rule::R19,
        Rule::R20,
        Rule::R21,
        Rule::R22,
        Rule::R23,
        Rule::R23_1,
        Rule::R23_2,
        Rule::R23_3,
        Rule::R23_4,
        Rule::R23_5,
        Rule::R24,
    ];

    /// The label the spec uses: `R7.4`, `R14.1b`.
    pub fn label(self) -> &'static str {
        match self {
            Rule::R1 => "R1",
            Rule::R2 => "R2",
            Rule::R3 => "R3",
            Rule::R4 => "R4",
            Rule::R4_1 => "R4.1",
            Rule::R4_2 => "R4.2",
            Rule::R4_3 => "R4.3",
            Rule::R4_4 => "R4.4",
            Rule::R5 => "R5",
            Rule::R6 => "R6",
            Rule::R7 => "R7",
            Rule::R7_1 => "R7.1",
            Rule::R7_2 => "R7.2",
            Rule::R7_3 => "R7.3",
            Rule::R7_4 => "R7.4",
            Rule::R7_5 => "R7.5",
            Rule::R8 => "R8",
            Rule::R9 => "R9",
            Rule::R10 => "R10",
            Rule::R11 => "R11",
            Rule::R12 => "R12",
            Rule::R13 => "R13",
            Rule::R14 => "R14",
            Rule::R14_1 => "R14.1",
            Rule::R14_1b => "R14.1b",
            Rule::R14_2 => "R14.2",
            Rule::R14_3 => "R14.3",
            Rule::R14_4 => "R14.4",
            Rule::R14_5 => "R14.5",
            Rule::R15 => "R15",
            Rule::R16 => "R16",
            Rule::R17 => "R17",
            Rule::R18 => "R18",
            Rule::R19 => "R19",
            Rule::R20 => "R20",
            Rule::R21 => "R21",
            Rule::R22 => "R22",
            Rule::R23 => "R23",
            Rule::R23_1 => "R23.1",
            Rule::R23_2 => "R23.2",
            Rule::R23_3 => "R23.3",
            Rule::R23_4 => "R23.4",
            Rule::R23_5 => "R23.5",
            Rule::R24 => "R24",
        }
    }

    /// The numbered rule of section 5 this label belongs to: `R7.4` -> `R7`.
    pub fn number(self) -> &'static str {
        let label = self.label();
        label.split('.').next().unwrap_or(label)
    }

    /// The rule numbers of section 5, each once, in order (`R1`..`R24`).
    pub fn numbers() -> Vec<&'static str> {
        let mut out: Vec<&'static str> = Vec::new();
        for r in Rule::ALL {
            if out.last() != Some(&r.number()) {
                out.push(r.number());
            }
        }
        out
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// The rules one step fired, as a bit set (no allocation on the checker's hot path).
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct RuleSet(u64);

impl RuleSet {
    pub fn insert(&mut self, r: Rule) {
        self.0 |= 1 << r as u64;
    }
    pub fn contains(self, r: Rule) -> bool {
        self.0 & (1 << r as u64) != 0
    }
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    pub fn iter(self) -> impl Iterator<Item = Rule> {
        Rule::ALL.into_iter().filter(move |r| self.contains(*r))
    }
}

impl fmt::Debug for RuleSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.iter().map(Rule::label))
            .finish()
    }
}

impl Serialize for RuleSet {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter().map(Rule::label))
    }
}

#[cfg(test)]
mod tests {
    use super::{Rule, RuleSet};

    #[test]
    fn every_rule_fits_the_set_and_numbers_run_r1_to_r24() {
        let mut all = RuleSet::default();
        for r in Rule::ALL {
            all.insert(r);
        }
        assert_eq!(all.iter().count(), Rule::ALL.len());
        let expected: Vec<String> = (1..=24).map(|n| format!("R{n}")).collect();
        let mut numbers: Vec<&str> = Rule::numbers();
        numbers.sort_by_key(|n| n[1..].parse::<u32>().unwrap());
        assert_eq!(numbers, expected);
    }
}

#[cfg(test)]
mod spec_tests {
    use super::Rule;

    /// A rule added to section 5 of the spec must be added here too (and then be fired and
    /// covered), and a rule removed there must go from here.
    #[test]
    fn the_rule_table_matches_the_rules_of_spec_section_5() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../spec/protocol.md");
        let spec = std::fs::read_to_string(path).expect("spec/protocol.md");
        let mut in_spec: Vec<String> = spec
            .lines()
            .filter_map(|l| l.strip_prefix("- **R"))
            .map(|rest| {
                let n: String = rest.chars().take_while(char::is_ascii_digit).collect();
                format!("R{n}")
            })
            .collect();
        in_spec.sort();
        in_spec.dedup();
        let mut ours: Vec<String> = Rule::numbers().iter().map(|s| s.to_string()).collect();
        ours.sort();
        assert_eq!(in_spec, ours);
    }
}
