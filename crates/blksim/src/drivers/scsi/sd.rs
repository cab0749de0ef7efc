//! `drivers/scsi/sd.c`: sd names and numbers (`sd_format_disk_name`, Documentation/devices.txt).

/// `sd` names in the kernel's order: sda..sdz, sdaa..sdzz.
pub fn sd_name(i: u32) -> String {
    fn letters(mut n: u32) -> String {
        let mut s = Vec::new();
        loop {
            s.push(b'a' + (n % 26) as u8);
            if n < 26 {
                break;
            }
            n = n / 26 - 1;
        }
        s.reverse();
        String::from_utf8(s).expect("ascii")
    }
    format!("sd{}", letters(i))
}

/// sd major:minor: 16 minors per disk; majors 8, 65-71, 128-135 (Documentation/devices.txt).
pub fn sd_major_minor(i: u32) -> (u32, u32) {
    let group = i / 16;
    let major = match group {
        0 => 8,
        1..=7 => 64 + group,
        _ => 120 + group,
    };
    (major, (i % 16) * 16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sd_names_follow_the_kernel() {
        assert_eq!(sd_name(0), "sda");
        assert_eq!(sd_name(25), "sdz");
        assert_eq!(sd_name(26), "sdaa");
        assert_eq!(sd_name(79), "sdcb");
        assert_eq!(sd_major_minor(0), (8, 0));
        assert_eq!(sd_major_minor(17), (65, 16));
        assert_eq!(sd_major_minor(128), (128, 0));
    }
}
