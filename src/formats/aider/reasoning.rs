//! The reasoning Aider writes into a reply. Where a model streams its reasoning apart from its answer (Anthropic's
//! and Gemini's thinking, DeepSeek's and local models' `reasoning_content`), Aider shows it inside
//! `<thinking-content-7bbeb8e1441453ad999a0bbba8a46d4b>` tags, and its chat history file keeps the tags; before the
//! reply joins the chat, Aider removes them and what they hold (`reasoning_tags.remove_reasoning_content`), so the
//! model is never sent its reasoning again. The reader keeps it as the reply's unsigned thinking: shown, counted
//! in no request.

/// Aider's tag (`reasoning_tags.REASONING_TAG`).
const TAG: &str = "thinking-content-7bbeb8e1441453ad999a0bbba8a46d4b";

/// A reply's reasoning (what Aider removes, in order, joined) and its answer (what Aider keeps), as Aider's
/// `remove_reasoning_content` tells them apart: every complete tagged span is reasoning, and so is everything
/// before a closing tag whose opening one is missing. Text with no tag is all answer.
pub fn split(reply: &str) -> (String, String) {
    let open = format!("<{TAG}>");
    let close = format!("</{TAG}>");
    let mut thinking: Vec<String> = Vec::new();
    let mut answer = String::new();
    let mut rest = reply;
    while let Some(a) = rest.find(&open) {
        let Some(b) = rest[a + open.len()..].find(&close) else {
            break;
        };
        answer.push_str(&rest[..a]);
        thinking.push(rest[a + open.len()..a + open.len() + b].trim().to_string());
        rest = &rest[a + open.len() + b + close.len()..];
    }
    answer.push_str(rest);
    let mut answer = answer.trim().to_string();
    if let Some(c) = answer.find(&close) {
        thinking.push(answer[..c].trim().to_string());
        answer = answer[c + close.len()..].trim().to_string();
    }
    thinking.retain(|t| !t.is_empty());
    (thinking.join("\n\n"), answer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tagged_reasoning_is_taken_out_of_the_answer() {
        let r = format!("<{TAG}>\n\nLet me think.\n\n</{TAG}>\n\n\n\nHello!");
        assert_eq!(split(&r), ("Let me think.".into(), "Hello!".into()));
        // two spans, text between them kept
        let r = format!("<{TAG}>a</{TAG}>one <{TAG}>b</{TAG}> two");
        assert_eq!(split(&r), ("a\n\nb".into(), "one  two".into()));
        // a closing tag without its opening one: what comes before it is reasoning
        let r = format!("half a thought</{TAG}>\nThe answer.");
        assert_eq!(split(&r), ("half a thought".into(), "The answer.".into()));
        // an opening tag never closed (Aider removes nothing) and no tag at all
        let r = format!("<{TAG}>cut off");
        assert_eq!(split(&r), (String::new(), r.clone()));
        assert_eq!(split("Plain."), (String::new(), "Plain.".into()));
    }
}
