//! A real editor, headless: Neovim opens a file through the real `tsl lsp` binary and gets
//! its diagnostics (at the right column after non-ASCII text, converted from UTF-16 by
//! Neovim itself), a hover with a symbolic type, and a definition. The script is
//! `editors/nvim/lsp_test.lua`. Without `nvim` on the PATH the test says so and passes,
//! unless `TSL_REQUIRE_NVIM=1` (as CI sets it), when it fails.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

fn nvim_available() -> bool {
    Command::new("nvim")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

#[test]
fn neovim_shows_diagnostics_and_hovers_from_tsl_lsp() {
    if !nvim_available() {
        assert!(
            std::env::var("TSL_REQUIRE_NVIM").as_deref() != Ok("1"),
            "TSL_REQUIRE_NVIM=1 but `nvim` is not on the PATH (install the `neovim` package)"
        );
        eprintln!("skipped: `nvim` is not on the PATH (install the `neovim` package to run it)");
        return;
    }
    let directory = std::env::temp_dir().join(format!("tsl-nvim-{}", std::process::id()));
    std::fs::create_dir_all(&directory).expect("a scratch directory");
    let file = directory.join("shapes.tsl");
    let text = "@compile\n\
                fn f(x: f32[n, 3]) -> f32[n, 3] {\n    let y = x * 2.0\n    return y\n}\n\
                let s = \"é\"; print(missing)\n";
    std::fs::write(&file, text).expect("the script");
    let out = directory.join("result.json");
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("editors/nvim/lsp_test.lua");
    let mut nvim = Command::new("nvim")
        .args(["--headless", "--clean", "-u", "NONE", "-c"])
        .arg(format!("luafile {}", script.display()))
        .env("TSL_BIN", env!("CARGO_BIN_EXE_tsl"))
        .env("TSL_FILE", &file)
        .env("TSL_OUT", &out)
        .env("TSL_HOVER", "3:11")
        .env("TSL_DEFINITION", "3:11")
        .current_dir(&directory)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("starting nvim");
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if nvim.try_wait().expect("waiting for nvim").is_some() {
            break;
        }
        if Instant::now() > deadline {
            let _ = nvim.kill();
            panic!("nvim did not finish within two minutes");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let result: Value =
        serde_json::from_str(&std::fs::read_to_string(&out).expect("nvim wrote its result"))
            .expect("the result is JSON");
    assert!(result.get("error").is_none(), "{result:#}");
    assert_eq!(result["published"], true, "{result:#}");
    let diagnostics = result["diagnostics"].as_array().expect("diagnostics");
    let missing = diagnostics
        .iter()
        .find(|d| {
            d["message"]
                .as_str()
                .is_some_and(|m| m.contains("`missing` is not defined"))
        })
        .unwrap_or_else(|| panic!("the name error: {result:#}"));
    // The server said UTF-16 column 19; after the two-byte `é` that is byte 20 in Neovim.
    assert_eq!(missing["line"], 5);
    assert_eq!(missing["column"], 20, "{result:#}");
    let hover = result["hover"]["contents"]["value"]
        .as_str()
        .unwrap_or_default();
    assert!(hover.contains("y: f32[n, 3]"), "{result:#}");
    let definition = &result["definition"];
    let start = if definition.is_array() {
        &definition[0]["range"]["start"]
    } else {
        &definition["range"]["start"]
    };
    assert_eq!(start["line"], 2, "{result:#}");
    assert_eq!(start["character"], 8, "{result:#}");
}
