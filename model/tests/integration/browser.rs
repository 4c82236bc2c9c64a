//! The Explorer in a real browser: headless Chromium (Debian's `chromium`, which
//! `scripts/test-all.sh` installs where it is missing) opens the counterexample address that
//! `check` prints, on a served `rebalance-model explore`, and the page it renders must mark the
//! violated property on that state, show the state's text, mark what the step changed, call
//! the n/a companions n/a, and carry no Rust debug text.
//!
//! Without Chromium the test fails, saying how to get it: it never passes without a browser.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// `$CHROMIUM`, else `chromium` where Debian puts it or on the PATH.
fn chromium() -> PathBuf {
    if let Some(p) = std::env::var_os("CHROMIUM") {
        return PathBuf::from(p);
    }
    let debian = PathBuf::from("/usr/bin/chromium");
    if debian.exists() {
        return debian;
    }
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("chromium"))
            .find(|p| p.exists())
    });
    on_path.unwrap_or_else(|| {
        panic!(
            "no Chromium for the browser test: run scripts/test-all.sh (it installs Debian's \
             chromium), or `apt-get install chromium`, or set CHROMIUM to a Chromium binary"
        )
    })
}

/// The DOM of `url` after Chromium has loaded it and run its scripts. The flags are those this
/// machine's closed network needs (no background connections) and root needs (no sandbox).
fn dump_dom(url: &str) -> String {
    let profile = tempfile::tempdir().unwrap();
    let out = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(["--dump-dom", url])
        .stderr(Stdio::null())
        .output()
        .expect("Chromium starts");
    assert!(out.status.success(), "chromium --dump-dom {url}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// A served Explorer, stopped by its process id when dropped.
struct Served {
    child: Child,
    addr: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn explore(args: &[&str]) -> Served {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr = format!("127.0.0.1:{port}");
    let child = Command::new(env!("CARGO_BIN_EXE_rebalance-model"))
        .arg("explore")
        .args(args)
        .args(["--addr", &addr])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let served = Served { child, addr };
    for _ in 0..200 {
        if ureq::get(&format!("http://{}/", served.addr))
            .call()
            .is_ok()
        {
            return served;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("the Explorer did not answer on {}", served.addr);
}

/// The address `check` prints under `property`'s counterexample, and the properties it calls
/// n/a.
fn check_output(args: &[&str], property: &str) -> (String, Vec<String>) {
    let out = Command::new(env!("CARGO_BIN_EXE_rebalance-model"))
        .arg("check")
        .args(args)
        .args(["--threads", "1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let url = stdout
        .lines()
        .skip_while(|l| !l.starts_with(&format!("  {property} ")))
        .find_map(|l| l.trim_start().strip_prefix("Explorer: "))
        .unwrap_or_else(|| panic!("no Explorer address under {property}:\n{stdout}"))
        .split(' ')
        .next()
        .unwrap()
        .to_string();
    let na = stdout
        .lines()
        .filter(|l| l.contains(" n/a ("))
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .collect();
    (url, na)
}

/// The value of `data-mark` on the properties table's row of `property`.
fn mark_of(dom: &str, property: &str) -> String {
    dom.match_indices("<tr class=\"property ")
        .map(|(i, _)| &dom[i..])
        .find(|r| {
            r.split('>')
                .next()
                .unwrap()
                .contains(&format!("data-property=\"{property}\""))
        })
        .and_then(|r| r.split("data-mark=\"").nth(1))
        .and_then(|r| r.split('"').next())
        .unwrap_or_else(|| panic!("no row for {property} in:\n{dom}"))
        .to_string()
}

#[test]
fn a_real_browser_shows_the_checks_counterexample_marked_on_its_state() {
    let model = ["--config", "ci-store", "--bug", "cancel-best-effort"];
    let (url, na) = check_output(&model, "INV-CANCEL-PERSISTED-FIRST");
    let route = url
        .strip_prefix("http://127.0.0.1:3000")
        .unwrap_or_else(|| panic!("{url}"));
    assert!(route.starts_with("/steps/0/"), "{url}");
    assert!(na.len() >= 5, "ci-store has n/a companions: {na:?}");
    let served = explore(&model);

    // The printed address, and the same path in the form `check` printed before (Stateright's
    // `#/steps/...`), which the page forwards.
    for address in [
        format!("http://{}{route}", served.addr),
        format!("http://{}/#{route}", served.addr),
    ] {
        let dom = dump_dom(&address);
        // A state invariant and a history invariant (a sticky flag the cancel's step set).
        for violated in ["INV-CANCEL-PERSISTED-FIRST", "INV-CANCEL-EFFECTS"] {
            assert_eq!(mark_of(&dom, violated), "violated", "{address}");
        }
        assert!(
            dom.contains("This state violates INV-CANCEL-PERSISTED-FIRST"),
            "{address}: {dom}"
        );
        // Every other invariant of the path's last state is judged too, not left blank.
        assert_eq!(mark_of(&dom, "INV-SLOT"), "holds", "{address}");
        for name in &na {
            assert_eq!(mark_of(&dom, name), "n-a", "{address}: {name}");
        }
        // The state's text is on the page, and the lines the cancel changed are marked.
        assert!(dom.contains("store (coordinator epoch 1)"), "{address}");
        assert!(
            dom.contains(
                "<mark class=\"changed\">  rebalance 1, overall REBALANCING, cancel_requested true"
            ),
            "{address}: {dom}"
        );
        assert!(dom.contains("class=\"changed\""), "picture: {address}");
        for debug in [
            "Some(",
            "None",
            "SystemState",
            "ServerSet",
            "InlineVec",
            "BucketId",
            "{ ",
        ] {
            assert!(!dom.contains(debug), "`{debug}` on {address}:\n{dom}");
        }
    }

    // The state before the cancel holds the property: the mark is the state's, not the model's.
    let before = route.rsplit_once('/').unwrap().0;
    let dom = dump_dom(&format!("http://{}{before}", served.addr));
    assert_eq!(mark_of(&dom, "INV-CANCEL-PERSISTED-FIRST"), "holds");
}
