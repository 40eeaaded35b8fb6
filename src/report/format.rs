//! Which output a command prints, and whether it is coloured. Plain enums, so that the
//! command line (and a configuration file) can set them the same way.

use std::ffi::OsString;

/// `--output-format` of `fix` and `parse`.
#[derive(clap::ValueEnum, serde::Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum OutputFormat {
    /// The human view (a patch on stdout, the log on stderr).
    Text,
    /// One JSON object on stdout (the same as `--json`).
    Json,
    /// GitHub Actions workflow commands on stdout (`::error file=...,line=...::...`), the
    /// human log on stderr.
    Github,
}

/// `--output-format` of the commands that have no GitHub view (`probe`, `restore`, `rules`).
#[derive(clap::ValueEnum, serde::Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum TextOrJson {
    Text,
    Json,
}

/// `--json` is the short form of `--output-format json`; clap refuses the two together.
pub fn output_format(json: bool, format: Option<OutputFormat>) -> OutputFormat {
    if json {
        OutputFormat::Json
    } else {
        format.unwrap_or(OutputFormat::Text)
    }
}

/// Whether `--json` or `--output-format json` asks for JSON (commands without a GitHub view).
pub fn wants_json(json: bool, format: Option<TextOrJson>) -> bool {
    json || format == Some(TextOrJson::Json)
}

/// `--color`: clap's and uv's three values.
#[derive(clap::ValueEnum, serde::Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ColorChoice {
    /// Colour a stream that is a terminal (not TERM=dumb), unless NO_COLOR is set;
    /// CLICOLOR_FORCE or FORCE_COLOR colour one that is not.
    #[default]
    Auto,
    /// Colour even when piped and with NO_COLOR set (the flag wins over the environment).
    Always,
    /// Never colour.
    Never,
}

impl ColorChoice {
    /// Whether a stream gets colour, reading the environment through `env` (a parameter, so
    /// tests need not change the process environment).
    pub fn enabled_with(self, is_terminal: bool, env: impl Fn(&str) -> Option<OsString>) -> bool {
        let set = |name: &str| env(name).is_some_and(|v| !v.is_empty());
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            // The order anstream (clap's own colour crate) uses: NO_COLOR first, then a
            // forced colour, then the terminal (not a `dumb` one, not CLICOLOR=0).
            ColorChoice::Auto => {
                if set("NO_COLOR") {
                    false
                } else if env("CLICOLOR_FORCE").is_some_and(|v| !v.is_empty() && v != "0")
                    || set("FORCE_COLOR")
                {
                    true
                } else {
                    is_terminal
                        && env("TERM").is_none_or(|t| t != "dumb")
                        && env("CLICOLOR").is_none_or(|v| v != "0")
                }
            }
        }
    }

    /// [`Self::enabled_with`] on the process environment.
    pub fn enabled(self, is_terminal: bool) -> bool {
        self.enabled_with(is_terminal, |name| std::env::var_os(name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
        move |name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| OsString::from(v))
        }
    }

    #[test]
    fn auto_follows_the_terminal() {
        assert!(ColorChoice::Auto.enabled_with(true, env(&[])));
        assert!(!ColorChoice::Auto.enabled_with(false, env(&[])));
        assert!(!ColorChoice::Auto.enabled_with(true, env(&[("TERM", "dumb")])));
        assert!(!ColorChoice::Auto.enabled_with(true, env(&[("CLICOLOR", "0")])));
    }

    #[test]
    fn no_color_wins_over_auto_and_any_force() {
        for force in [("CLICOLOR_FORCE", "1"), ("FORCE_COLOR", "1")] {
            let vars = [("NO_COLOR", "1"), force];
            assert!(!ColorChoice::Auto.enabled_with(true, env(&vars)));
        }
        // An empty NO_COLOR is not set (no-color.org).
        assert!(ColorChoice::Auto.enabled_with(true, env(&[("NO_COLOR", "")])));
    }

    #[test]
    fn force_colours_a_pipe_in_auto() {
        assert!(ColorChoice::Auto.enabled_with(false, env(&[("CLICOLOR_FORCE", "1")])));
        assert!(!ColorChoice::Auto.enabled_with(false, env(&[("CLICOLOR_FORCE", "0")])));
        assert!(ColorChoice::Auto.enabled_with(false, env(&[("FORCE_COLOR", "1")])));
    }

    #[test]
    fn the_flag_wins_over_the_environment() {
        assert!(ColorChoice::Always.enabled_with(false, env(&[("NO_COLOR", "1")])));
        assert!(!ColorChoice::Never.enabled_with(true, env(&[("CLICOLOR_FORCE", "1")])));
    }

    #[test]
    fn json_flag_is_the_short_form() {
        assert_eq!(output_format(true, None), OutputFormat::Json);
        assert_eq!(output_format(false, None), OutputFormat::Text);
        assert_eq!(
            output_format(false, Some(OutputFormat::Github)),
            OutputFormat::Github
        );
        assert!(wants_json(false, Some(TextOrJson::Json)));
        assert!(!wants_json(false, Some(TextOrJson::Text)));
    }
}
