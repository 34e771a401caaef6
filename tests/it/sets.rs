//! Sets of tables (`gen --men N`, `gen --list FILE`) and the comparison of a folder with
//! the leading generator's published statistics (`stats --compare`).

use crate::fixtures::pawn_tables;
use crate::util::{copy_tables, gen, reference_dir, stderr, tbstream};
use std::process::Command;
use tbstream::Material;

fn published_stats() -> std::path::PathBuf {
    reference_dir().join("published-stats.txt")
}

#[test]
fn every_published_table_is_one_signature_of_its_set() {
    // The set of a size is exactly the published one up to 5 men (5 + 30 + 110), and holds
    // every published 6-men table, in the published orientation.
    let text = std::fs::read_to_string(published_stats()).unwrap();
    let published = tbstream::published::parse_published(&text).unwrap();
    for men in 3..=6 {
        let set = Material::every_signature(men);
        let names: Vec<String> = set.iter().map(|m| m.to_string()).collect();
        let of_size: Vec<&str> =
            published.iter().map(|t| t.name.as_str()).filter(|n| Material::parse(n).unwrap().men() == men).collect();
        for name in &of_size {
            assert!(names.iter().any(|n| n == name), "{name} is not in the {men}-men set as published");
        }
        if men <= 5 {
            assert_eq!(of_size.len(), set.len(), "{men} men");
        }
    }
}

#[test]
fn the_three_and_four_men_sets_equal_the_published_statistics() {
    // The shared pawn tables are every 3- and 4-men table (35 signatures): `gen --men 3`
    // and `--men 4` find them built, write SHA256SUMS, and `stats --compare` finds every
    // one equal to the published statistics.
    let dir = copy_tables(pawn_tables(), |_| true);
    let out = dir.path();
    for men in ["3", "4"] {
        let o = gen(out, &["--men", men, "--threads", "2"], &[]);
        assert!(o.status.success(), "{}", stderr(&o));
        let sums = std::fs::read_to_string(out.join("SHA256SUMS")).unwrap();
        // Runs: 5 of 3 men; of 4 men, 15 with a bare black king, 5 symmetric, 10 x 2.
        let expected_runs = if men == "3" { 5 } else { 5 + 15 + 5 + 20 };
        assert_eq!(sums.lines().count(), expected_runs, "{sums}");
        let check = Command::new("sha256sum").arg("-c").arg("--quiet").arg("SHA256SUMS").current_dir(out).output();
        if let Ok(check) = check {
            assert!(check.status.success(), "sha256sum -c: {}", String::from_utf8_lossy(&check.stdout));
        }
    }
    let stats = published_stats();
    let (code, stdout, stderr) =
        tbstream(&["stats", "--compare", stats.to_str().unwrap(), "--tables", out.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    let verdicts: Vec<&str> = stdout.lines().filter(|l| l.contains(": equal") || l.contains(": DIFFERS")).collect();
    assert_eq!(verdicts.len(), 35, "{stdout}");
    assert!(verdicts.iter().all(|v| v.contains(": equal")), "{stdout}");
    assert!(stdout.contains("KPPvK: equal (x2 orders of identical men, counts within"), "{stdout}");
    assert!(stdout.contains("KQvKR: equal\n"), "{stdout}");
}

#[test]
fn a_table_that_differs_is_named_with_what_differs() {
    // The statistics of KQvKR with one white-to-move win moved from 3 plies to 5.
    let text = std::fs::read_to_string(published_stats()).unwrap();
    let start = text.find("########## KQvKR ##########").unwrap();
    let end = text[start + 1..].find("\n##########").map_or(text.len(), |e| start + 1 + e);
    let mut block = text[start..end].to_string();
    let line = |n: u64, k: u32| format!("{n} positions win in {k} ply.");
    let published = tbstream::published::parse_published(&block).unwrap();
    let (three, five) = (published[0].white_to_move.win_in[&3], published[0].white_to_move.win_in[&5]);
    block = block.replace(&line(three, 3), &line(three - 1, 3)).replace(&line(five, 5), &line(five + 1, 5));
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("stats.txt");
    std::fs::write(&file, block).unwrap();
    let tables = pawn_tables().to_str().unwrap();
    let (code, stdout, _) = tbstream(&["stats", "--compare", file.to_str().unwrap(), "--tables", tables]);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(stdout.contains("KQvKR: DIFFERS: white to move win in 3 ply"), "{stdout}");
    assert!(stdout.contains("white to move win in 5 ply"), "{stdout}");
    // Named signatures: the one asked for, found under either colour order.
    let (code, stdout, _) = tbstream(&["stats", "--compare", file.to_str().unwrap(), "--tables", tables, "KRvKQ"]);
    assert_eq!(code, Some(1), "{stdout}");
    assert_eq!(stdout.lines().count(), 2, "{stdout}");
}

#[test]
fn bad_sets_and_statistics_files_are_clear_errors() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("tables");
    let list = d.path().join("list.txt");
    std::fs::write(&list, "# my set\nKQvK\n\nKRvK  # the rook\nKXvK\n").unwrap();
    let missing = d.path().join("missing.txt");
    let cases: [(&[&str], &str); 5] = [
        (&["--men", "7"], "sets of 3 to 6 men"),
        (&["--men", "2"], "sets of 3 to 6 men"),
        (&["--men", "3", "--pawns", "3"], "no endgame has that many pawns"),
        (&["--list", list.to_str().unwrap()], "list.txt line 5"),
        (&["--list", missing.to_str().unwrap()], "reading the list"),
    ];
    for (args, message) in cases {
        let o = gen(&out, args, &[]);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(message), "{args:?}: {}", stderr(&o));
    }
    assert!(!out.join("KQvK.tbs").exists(), "nothing is built from a bad list");
    let (code, _, err) = tbstream(&["gen", "--pawns", "1"]);
    assert_eq!(code, Some(2), "{err}");
    // A statistics file with a line out of format, and a folder without its tables.
    let bad = d.path().join("bad.txt");
    std::fs::write(&bad, "########## KQvK ##########\nWhite to move:\n12 positions are winning.\n").unwrap();
    let tables = pawn_tables().to_str().unwrap();
    let (code, _, err) = tbstream(&["stats", "--compare", bad.to_str().unwrap(), "--tables", tables]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("line 3") && err.contains("12 positions are winning"), "{err}");
    let empty = tempfile::tempdir().unwrap();
    let stats = published_stats();
    let (code, _, err) =
        tbstream(&["stats", "--compare", stats.to_str().unwrap(), "--tables", empty.path().to_str().unwrap()]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("holds none of the"), "{err}");
}

#[test]
fn a_list_builds_its_set_and_its_checksums() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("tables");
    let list = d.path().join("list.txt");
    std::fs::write(&list, "KRvK\n# comment\nKQKR\n").unwrap();
    let o = gen(&out, &["--list", list.to_str().unwrap(), "--threads", "2"], &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("set of 2 endgames complete: 4 tables"), "{text}");
    let err = stderr(&o);
    assert!(err.contains("job: 4 of 4 runs done") && err.contains("ETA"), "{err}");
    let sums = std::fs::read_to_string(out.join("SHA256SUMS")).unwrap();
    let names: Vec<&str> = sums.lines().map(|l| l.split_once("  ").unwrap().1).collect();
    assert_eq!(names, ["KQvK.tbs", "KQvKR.tbs", "KRvK.tbs", "KRvKQ.tbs"]);
    for line in sums.lines() {
        let (hash, name) = line.split_once("  ").unwrap();
        assert_eq!(hash.len(), 64, "{line}");
        assert!(out.join(name).exists(), "{line}");
    }
}
