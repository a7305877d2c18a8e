//! The REPL's `:` commands.

use std::fmt::Write as _;
use std::path::Path;

use super::{Flow, Session, say};
use crate::eval::Interpreter;

/// One command: its name, what its argument is (empty for none, in brackets when optional),
/// and what it does.
pub(super) struct Command {
    pub(super) name: &'static str,
    pub(super) argument: &'static str,
    about: &'static str,
    run: fn(&mut Session, &str) -> Flow,
}

pub(super) const COMMANDS: &[Command] = &[
    Command {
        name: "help",
        argument: "",
        about: "this list",
        run: |_, _| help(),
    },
    Command {
        name: "type",
        argument: "EXPR",
        about: "the dtype and shape of a tensor, or the kind of another value",
        run: Session::type_of,
    },
    Command {
        name: "graph",
        argument: "FN",
        about: "the last traced graph of a @compile function",
        run: Session::graph,
    },
    Command {
        name: "guards",
        argument: "FN",
        about: "the guards of a @compile function's cached graphs",
        run: Session::guards,
    },
    Command {
        name: "log",
        argument: "[CHANNELS]",
        about: "log to stderr: dynamic,guards,recompiles,graph, all, or off",
        run: Session::log,
    },
    Command {
        name: "device",
        argument: "[cpu|gpu]",
        about: "where code runs from now on (values move when needed), or show it",
        run: Session::device,
    },
    Command {
        name: "load",
        argument: "FILE",
        about: "run a script here; its definitions and variables stay",
        run: Session::load,
    },
    Command {
        name: "reset",
        argument: "",
        about: "forget every definition, variable and module",
        run: |session, _| {
            session.interpreter.reset_session();
            Flow::Next
        },
    },
    Command {
        name: "quit",
        argument: "",
        about: "leave (Ctrl-D too)",
        run: |_, _| Flow::Quit,
    },
];

/// The commands whose name starts with `prefix`; an exact name is the only match.
pub(super) fn matching(prefix: &str) -> Vec<&'static Command> {
    if let Some(exact) = COMMANDS.iter().find(|command| command.name == prefix) {
        return vec![exact];
    }
    COMMANDS
        .iter()
        .filter(|command| command.name.starts_with(prefix))
        .collect()
}

fn help() -> Flow {
    let mut text = String::from(
        "Statements and definitions run in one session; a bare expression prints its value.\n\
         An unfinished block or bracket continues on the next line.\n",
    );
    for command in COMMANDS {
        let usage = format!(":{} {}", command.name, command.argument);
        let _ = writeln!(text, "  {usage:<16} {}", command.about);
    }
    text.push_str(
        "Commands may be shortened (`:q`). Tab completes names, methods after `.` and modules \
         after `use std.`;\nCtrl-C cancels the input or stops a running cell.\n",
    );
    say(&text);
    Flow::Next
}

impl Session {
    /// Runs a `:` command line.
    pub(super) fn command(&mut self, line: &str) -> Flow {
        crate::diag::panic::inject("command");
        let line = line.trim().trim_start_matches(':');
        let (name, argument) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let argument = argument.trim();
        let command = match matching(name).as_slice() {
            [command] => *command,
            [] => return self.unknown_command(name),
            several => {
                let names: Vec<String> = several.iter().map(|c| format!(":{}", c.name)).collect();
                let message = format!("`:{name}` could be {}", names.join(", "));
                self.command_error(&message, None);
                return Flow::Next;
            }
        };
        let required = !command.argument.is_empty() && !command.argument.starts_with('[');
        match (command.argument.is_empty(), required, argument.is_empty()) {
            (true, _, false) => {
                let message = format!("`:{}` takes no argument", command.name);
                self.command_error(&message, None);
                Flow::Next
            }
            (_, true, true) => {
                let message = format!("`:{}` needs {}", command.name, command.argument);
                let help = format!("write `:{} {}`", command.name, command.argument);
                self.command_error(&message, Some(&help));
                Flow::Next
            }
            _ => (command.run)(self, argument),
        }
    }

    fn unknown_command(&mut self, name: &str) -> Flow {
        let message = format!("unknown command `:{name}`");
        self.command_error(&message, Some("`:help` lists the commands"));
        Flow::Next
    }

    fn type_of(&mut self, expression: &str) -> Flow {
        let name = self.next_cell_name();
        let outcome = self
            .interpreter
            .evaluate_expression(&name, expression.to_string());
        if let Some(value) = self.settle(outcome) {
            say(&format!("{}\n", Interpreter::describe_type(&value)));
        }
        Flow::Next
    }

    fn graph(&mut self, function: &str) -> Flow {
        let described = self.interpreter.describe_graph(function);
        self.show_description(described)
    }

    fn guards(&mut self, function: &str) -> Flow {
        let described = self.interpreter.describe_guards(function);
        self.show_description(described)
    }

    fn show_description(&mut self, described: Result<String, String>) -> Flow {
        match described {
            Ok(text) => say(&format!("{}\n", text.trim_end())),
            Err(message) => self.command_error(&message, None),
        }
        Flow::Next
    }

    /// Sets the log channels, or shows them when `channels` is empty.
    fn log(&mut self, channels: &str) -> Flow {
        if let Err(message) = self.set_log(channels) {
            self.command_error(&message, None);
            return Flow::Next;
        }
        say(&format!(
            "log: {}\n",
            self.interpreter.describe_log_channels()
        ));
        Flow::Next
    }

    fn set_log(&mut self, channels: &str) -> Result<(), String> {
        if channels.is_empty() {
            return Ok(());
        }
        self.interpreter.set_log_channels(channels)
    }

    /// Switches the device, or shows it when `name` is empty.
    fn device(&mut self, name: &str) -> Flow {
        if !name.is_empty() {
            let Some(kind) = crate::backend::DeviceKind::parse(name) else {
                let message = format!("`{name}` is not a device");
                self.command_error(&message, Some("the devices are `cpu` and `gpu`"));
                return Flow::Next;
            };
            if let Err(diagnostic) = self.interpreter.use_device(kind) {
                self.failed = true;
                self.interpreter.report(&diagnostic);
                return Flow::Next;
            }
        }
        say(&format!("device: {}\n", self.interpreter.device()));
        Flow::Next
    }

    fn load(&mut self, file: &str) -> Flow {
        let outcome = self.interpreter.load_file(Path::new(file));
        self.settle(outcome);
        Flow::Next
    }
}
