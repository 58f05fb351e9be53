//! `cairn append CONV FILE|-`: one complete turn from a JSON array of messages in Anthropic Messages shape (or a
//! request body with a `messages` array); prints the new tip. A refused turn writes nothing.

use std::io::Read;
use std::path::Path;

use anyhow::{Context as _, Result, anyhow, bail};
use serde_json::Value;

use super::{Ctx, out};
use crate::commands::append::AppendTurn;
use crate::model::NewMessage;

#[derive(clap::Args)]
pub struct Args {
    conv: String,
    file: String,
}

pub fn run(ctx: &mut Ctx, a: Args) -> Result<()> {
    let messages = read_turn(&a.file)?;
    let ids = ctx.exec(AppendTurn {
        conversation: a.conv,
        messages,
    })?;
    out(ids.last().map(String::as_str).unwrap_or_default())
}

/// Reads a turn: a JSON array of messages (or a request body with a `messages` array).
fn read_turn(file: &str) -> Result<Vec<NewMessage>> {
    let text = if file == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .context("reading stdin")?;
        s
    } else {
        std::fs::read_to_string(Path::new(file)).with_context(|| format!("cannot read {file}"))?
    };
    let v: Value = serde_json::from_str(&text)
        .map_err(|e| anyhow!("{file}:{}:{}: {}", e.line(), e.column(), strip_position(&e)))?;
    let arr = match &v {
        Value::Array(a) => a,
        Value::Object(o) => match o.get("messages") {
            Some(Value::Array(a)) => a,
            _ => bail!("{file}: expected a JSON array of messages"),
        },
        _ => bail!("{file}: expected a JSON array of messages"),
    };
    arr.iter()
        .enumerate()
        .map(|(i, m)| {
            crate::wire::message_from_wire(m, &format!("[{i}]")).map_err(|e| anyhow!("{file}: {e}"))
        })
        .collect()
}

fn strip_position(e: &serde_json::Error) -> String {
    let s = e.to_string();
    match s.find(" at line ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}
