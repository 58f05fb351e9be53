//! A corpus of real-format fake secrets, one or more per family (cloud keys, VCS tokens, chat webhooks, package
//! registries, payment, AI providers, PEM/age/SSH keys, JWTs, DSNs, connection strings, passwords on command lines,
//! cookies and Authorization headers), and of code that only names a key. The secrets are assembled at run time
//! from their published shapes, with made-up bodies.

/// A deterministic made-up body of `n` characters from `alphabet`.
fn body(seed: u64, n: usize, alphabet: &str) -> String {
    let a: Vec<char> = alphabet.chars().collect();
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            a[(x % a.len() as u64) as usize]
        })
        .collect()
}

const ALNUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const UPPER: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
const HEX: &str = "0123456789abcdef";
const B64: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URLSAFE: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// (family, a line of transcript text holding the secret, the secret itself: what must not come out).
pub fn secrets() -> Vec<(&'static str, String, String)> {
    let mut v: Vec<(&'static str, String, String)> = Vec::new();
    let mut add =
        |family: &'static str, line: String, secret: String| v.push((family, line, secret));
    let k = format!("AKIA{}", body(1, 16, UPPER));
    add("aws access key id", format!("aws_access_key_id = {k}"), k);
    let s = body(2, 40, B64);
    add("aws secret key", format!("aws_secret_access_key = {s}"), s);
    let s = format!("ghp_{}", body(3, 36, ALNUM));
    add(
        "github classic token",
        format!("git push https://x:{s}@github.com/a/b"),
        s,
    );
    let s = format!("github_pat_{}_{}", body(4, 22, ALNUM), body(5, 59, ALNUM));
    add("github fine-grained token", format!("GH_TOKEN={s}"), s);
    let s = format!("gho_{}", body(6, 36, ALNUM));
    add("github oauth token", format!("oauth: {s}"), s);
    let s = format!("ghs_{}", body(7, 36, ALNUM));
    add("github app token", format!("installation token {s}"), s);
    let s = format!("glpat-{}", body(8, 20, URLSAFE));
    add("gitlab token", format!("CI_JOB_TOKEN={s}"), s);
    let s = format!(
        "xoxb-{}-{}-{}",
        body(9, 12, "0123456789"),
        body(10, 13, "0123456789"),
        body(11, 24, ALNUM)
    );
    add("slack bot token", format!("SLACK_BOT_TOKEN={s}"), s);
    let s = format!(
        "https://hooks.slack.com/services/T{}/B{}/{}",
        body(12, 8, UPPER),
        body(13, 10, UPPER),
        body(14, 24, ALNUM)
    );
    add("slack webhook", format!("curl -X POST {s} -d '{{}}'"), s);
    let s = format!(
        "https://discord.com/api/webhooks/{}/{}",
        body(15, 18, "0123456789"),
        body(16, 68, URLSAFE)
    );
    add("discord webhook", format!("webhook: {s}"), s);
    let s = format!("sk-ant-api03-{}AA", body(17, 93, URLSAFE));
    add("anthropic api key", format!("ANTHROPIC_API_KEY={s}"), s);
    let s = format!("sk-ant-oat01-{}", body(18, 95, URLSAFE));
    add(
        "claude code oauth token",
        format!("\"accessToken\": \"{s}\""),
        s,
    );
    let s = format!(
        "sk-proj-{}T3BlbkFJ{}",
        body(19, 74, URLSAFE),
        body(20, 74, URLSAFE)
    );
    add(
        "openai project key",
        format!("client = OpenAI(api_key=\"{s}\")"),
        s,
    );
    let s = format!("sk_live_{}", body(21, 24, ALNUM));
    add("stripe secret key", format!("stripe.api_key = '{s}'"), s);
    let s = format!("rk_live_{}", body(22, 24, ALNUM));
    add("stripe restricted key", format!("STRIPE_KEY={s}"), s);
    let s = format!("SK{}", body(23, 32, HEX));
    add("twilio api key", format!("twilio api key {s}"), s);
    let s = format!("SG.{}.{}", body(24, 22, URLSAFE), body(25, 43, URLSAFE));
    add("sendgrid key", format!("SENDGRID_API_KEY={s}"), s);
    let s = format!("pypi-AgEIcHlwaS5vcmc{}", body(26, 70, URLSAFE));
    add("pypi token", format!("password = {s}"), s);
    let s = format!("npm_{}", body(27, 36, ALNUM));
    add(
        "npm token",
        format!("//registry.npmjs.org/:_authToken={s}"),
        s,
    );
    let s = format!(
        "AGE-SECRET-KEY-1{}",
        body(28, 58, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L")
    );
    add("age secret key", format!("# created: 2026\n{s}"), s);
    let pem_body = body(29, 64, B64);
    let s = format!(
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA{pem_body}\n-----END RSA PRIVATE KEY-----"
    );
    add("rsa private key", s.clone(), pem_body);
    let ssh_body = body(30, 70, B64);
    let s = format!(
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA{ssh_body}\n-----END OPENSSH PRIVATE KEY-----"
    );
    add("openssh private key", s.clone(), ssh_body);
    let s = format!(
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.{}",
        body(31, 43, URLSAFE)
    );
    add("jwt", format!("Authorization: Bearer {s}"), s);
    let s = body(32, 32, HEX);
    add(
        "sentry dsn",
        format!("SENTRY_DSN=https://{s}@o123456.ingest.sentry.io/4504"),
        s,
    );
    let s = format!("{}==", body(33, 86, B64));
    add(
        "azure storage key",
        format!(
            "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={s};EndpointSuffix=core.windows.net"
        ),
        s,
    );
    let s = body(34, 16, ALNUM);
    add(
        "postgres url",
        format!("DATABASE_URL=postgres://app:{s}@db.internal:5432/prod"),
        s,
    );
    let s = body(35, 18, ALNUM);
    add(
        "mongodb url",
        format!("mongodb+srv://admin:{s}@cluster0.abcde.mongodb.net/test"),
        s,
    );
    let s = format!("{}!", body(36, 14, ALNUM));
    add(
        "mysql -p",
        format!("mysql -u root -p{s} -h 10.0.0.5 shop"),
        s,
    );
    let s = body(37, 14, ALNUM);
    add(
        "sshpass -p",
        format!("sshpass -p '{s}' ssh deploy@10.0.0.7"),
        s,
    );
    let s = body(38, 40, URLSAFE);
    add(
        "session cookie",
        format!("curl -H 'Cookie: session={s}' https://app.example"),
        s,
    );
    let s = body(39, 40, ALNUM);
    add(
        "authorization bearer",
        format!("-H \"Authorization: Bearer {s}\""),
        s,
    );
    let s = format!("AIza{}", body(40, 35, URLSAFE));
    add("google api key", format!("GOOGLE_API_KEY={s}"), s);
    let s = format!("hf_{}", body(41, 34, ALNUM));
    add(
        "hugging face token",
        format!("huggingface-cli login --token {s}"),
        s,
    );
    let s = format!("shpat_{}", body(42, 32, HEX));
    add("shopify token", format!("X-Shopify-Access-Token: {s}"), s);
    let s = format!("dop_v1_{}", body(43, 64, HEX));
    add("digitalocean token", format!("DIGITALOCEAN_TOKEN={s}"), s);
    let s = format!("lin_api_{}", body(44, 40, ALNUM));
    add("linear key", format!("LINEAR_API_KEY={s}"), s);
    let s = format!("dapi{}", body(45, 32, HEX));
    add("databricks token", format!("DATABRICKS_TOKEN={s}"), s);
    let s = format!("hvs.{}", body(46, 90, URLSAFE));
    add("vault token", format!("VAULT_TOKEN={s}"), s);
    let s = format!("glsa_{}_{}", body(47, 32, ALNUM), body(48, 8, HEX));
    add(
        "grafana service account token",
        format!("GRAFANA_TOKEN={s}"),
        s,
    );
    let s = format!("dp.pt.{}", body(49, 43, ALNUM));
    add("doppler token", format!("DOPPLER_TOKEN={s}"), s);
    let s = body(50, 18, ALNUM);
    add("env password", format!("DB_PASSWORD={s}"), s);
    let s = format!("{}:AA{}", body(51, 10, "0123456789"), body(52, 33, URLSAFE));
    add("telegram bot token", format!("TELEGRAM_BOT_TOKEN={s}"), s);
    let s = format!(
        "xapp-1-A{}-{}-{}",
        body(53, 10, UPPER),
        body(54, 13, "0123456789"),
        body(55, 64, HEX)
    );
    add("slack app token", format!("SLACK_APP_TOKEN={s}"), s);
    // families no rule set names (a provider newer than the rules), bare in prose: found by their shape
    let s = format!("fw_{}", body(56, 40, ALNUM));
    add(
        "unnamed family key",
        format!("the client takes {s} as its key"),
        s,
    );
    let s = format!("zx-live-{}", body(57, 48, ALNUM));
    add(
        "unnamed family live key",
        format!("curl -H 'X-Key: {s}' ."),
        s,
    );
    // families of AI and agent tooling the maintained rule sets do not name, bare in prose
    let uuid = |seed: u64| {
        format!(
            "{}-{}-4{}-a{}-{}",
            body(seed, 8, HEX),
            body(seed + 1, 4, HEX),
            body(seed + 2, 3, HEX),
            body(seed + 3, 3, HEX),
            body(seed + 4, 12, HEX)
        )
    };
    for (family, s) in [
        (
            "discord bot token",
            format!(
                "MTIzNDU2Nzg5MDEyMzQ1Njc4.G{}.{}",
                body(58, 5, URLSAFE),
                body(59, 38, URLSAFE)
            ),
        ),
        (
            "zhipu key",
            format!("{}.{}", body(60, 32, HEX), body(61, 16, ALNUM)),
        ),
        ("langfuse secret key", format!("sk-lf-{}", uuid(62))),
        (
            "qianfan key",
            format!("bce-v3/ALTAK-{}/{}", body(67, 21, ALNUM), body(68, 40, HEX)),
        ),
        ("fal key", format!("{}:{}", uuid(69), body(74, 32, HEX))),
        ("firecrawl key", format!("fc-{}", body(75, 32, HEX))),
        ("voyage key", format!("pa-{}", body(76, 43, URLSAFE))),
    ] {
        add(family, format!("bare in prose, {s} is what it took"), s);
    }
    // keys minted without a prefix (hexadecimal, a UUID, letters and digits, base64), found by the word before
    // them that names them
    for (family, line, s) in [
        ("deepgram key", "my Deepgram key is", body(77, 40, HEX)),
        (
            "assemblyai key",
            "The AssemblyAI API key:",
            body(78, 32, HEX),
        ),
        ("railway token", "railway token", uuid(79)),
        ("mistral key", "Mistral API key", body(84, 32, ALNUM)),
        (
            "upstash token",
            "the Upstash REST token is",
            format!("AX{}=", body(85, 60, B64.trim_end_matches("+/"))),
        ),
    ] {
        add(family, format!("{line} {s}, use it"), s);
    }
    v
}

/// Code and prose that only name a key: each must come out exactly as it went in.
pub fn lookalikes() -> Vec<&'static str> {
    vec![
        "const resolveApiKey = event.resolveApiKey;",
        "api_key = os.environ[\"OPENAI_API_KEY\"]",
        "token = getToken()",
        "password: string;",
        "let secret = config.secret;",
        "export ANTHROPIC_API_KEY=$ANTHROPIC_API_KEY",
        "if (!process.env.GITHUB_TOKEN) throw new Error(\"missing token\")",
        "# set AWS_SECRET_ACCESS_KEY in your environment first",
        "the secret of a good parser is a small grammar; tokens are cheap",
        "fn refresh_token(&self) -> Option<&str> { self.refresh.as_deref() }",
        "const { apiKey } = useSettings();",
        "headers[\"Authorization\"] = f\"Bearer {token}\"",
        "\t\t\tresult.apiKey = args[++i];",
        "const password = argv[2];",
        "token = getenv(\"GITHUB_TOKEN\")",
        // ids harnesses and providers write, hashes and base64 are not keys
        "tool_use_id: toolu_014io8Xzj9KmduZGduKZGSDL in msg_01XwTPVdM5y8bf1EDKvGBV35 (req_011CaBJWhtEYGeXKSjCTPCH9)",
        "reasoning rs_03690888774b547b0169b74ce153c4819bb713f02cc39d602a",
        // a dotted name in code, a hashed file name, a UUID, a dated snapshot name: none is a key
        "MyVeryLongServiceClassNameX.method.anotherVeryLongIdentifierNameHere();",
        "dist/5d41402abc4b2a76b9719d911017c592.bundleMainEntryA.js",
        "request 3f63af83-bd05-61e6-211c-70cf49952399 failed",
        "AWS_SECRET_ACCESS_KEY_FOR_PRODUCTION_DEPLOYMENTS_IN_EUROPE=",
        // a key of a kind that is no secret, and a hash after a word naming a key
        "The primary key is 3f63af83-bd05-61e6-211c-70cf49952399 for this row",
        "cache key 9eee3692f09e2e8c662248b483b7ffc050fec94d missed",
        "API key rotation happened at commit 9eee3692f09e2e8c662248b483b7ffc050fec94d",
        "\"integrity\": \"sha512-Zk8Lm2Nq9Rs4Tu7Vw1Xy5Za0Bc3De6Fg7Hi9Jk2Lm4No6Pq8Rs0Tu2Vw4Xy6Za8/Bc==\"",
    ]
}
