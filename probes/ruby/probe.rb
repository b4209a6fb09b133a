# frozen_string_literal: true
#
# sleeplab probe for Ruby: measures Ruby's own wait functions with
# Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond) and prints them in the
# sleeplab-probe/1 line protocol (spec/probe-protocol.md).
#
# Runs unchanged on MRI 3.x and on JRuby 9.3+ (Ruby 2.6 syntax: nothing newer is used).
#   ruby  probes/ruby/probe.rb ARGS
#   jruby probes/ruby/probe.rb ARGS
# See probes/ruby/README.md.

require 'rbconfig'

module SleeplabProbe
  PROTOCOL = 'sleeplab-probe/1'
  MONO = Process::CLOCK_MONOTONIC
  # Largest number of samples one cell may hold (arrays are pre-allocated).
  MAX_SAMPLES = 100_000_000
  DEFAULT_MAX_COUNT = 100_000
  # Numbers must fit a signed 64-bit integer, like every other probe's.
  MAX_NUMBER = 2**63 - 1

  # The objects the waits use; nobody ever signals or pushes to them.
  MUTEX = Thread::Mutex.new
  COND = Thread::ConditionVariable.new
  QUEUE = Thread::Queue.new

  # Ruby 3.2 added Queue#pop(timeout:). Older runtimes take the keyword hash as the
  # positional non_block flag (truthy) and raise ThreadError on the empty queue.
  def self.queue_pop_timeout_reason
    r = Thread::Queue.new.pop(timeout: 0)
    return nil if r.nil?

    "Queue#pop(timeout: 0) returned #{r.inspect}, expected nil"
  rescue ThreadError, ArgumentError, TypeError => e
    "Queue#pop(timeout:) needs Ruby 3.2 or later; this is #{RUBY_ENGINE} #{RUBY_VERSION} " \
      "(pop(timeout: 0) raised #{e.class})"
  end

  # Each method: kind, how the requested ns become the call's argument (done before the
  # timed region), and one timed call: clock read, the wait, clock read. Nothing else
  # happens between the two clock reads. The opening read is the call's start: stored
  # in starts[i] after the closing read (for --timestamps); the call returns elapsed ns.
  WaitMethod = Struct.new(:name, :kind, :description, :prep, :once, :reason)

  METHODS = [
    WaitMethod.new(
      'sleep', 'oneshot',
      'Kernel#sleep(d / 1e9): Float seconds',
      ->(d) { d / 1e9 },
      lambda do |a, starts, i|
        t0 = Process.clock_gettime(MONO, :nanosecond)
        sleep(a)
        t1 = Process.clock_gettime(MONO, :nanosecond)
        starts[i] = t0
        t1 - t0
      end
    ),
    WaitMethod.new(
      'ConditionVariable#wait', 'oneshot',
      'mutex.synchronize { cv.wait(mutex, d / 1e9) }: Float seconds, nobody signals; ' \
        'one call, no loop (an early return is reported, not hidden)',
      ->(d) { d / 1e9 },
      lambda do |a, starts, i|
        t0 = t1 = nil
        MUTEX.synchronize do
          t0 = Process.clock_gettime(MONO, :nanosecond)
          COND.wait(MUTEX, a)
          t1 = Process.clock_gettime(MONO, :nanosecond)
        end
        starts[i] = t0
        t1 - t0
      end
    ),
    WaitMethod.new(
      'IO.select', 'oneshot',
      'IO.select(nil, nil, nil, d / 1e9): Float seconds, no descriptors',
      ->(d) { d / 1e9 },
      lambda do |a, starts, i|
        t0 = Process.clock_gettime(MONO, :nanosecond)
        IO.select(nil, nil, nil, a)
        t1 = Process.clock_gettime(MONO, :nanosecond)
        starts[i] = t0
        t1 - t0
      end
    ),
    WaitMethod.new(
      'Thread.pass', 'yield',
      'Thread.pass',
      ->(_d) { nil },
      lambda do |_a, starts, i|
        t0 = Process.clock_gettime(MONO, :nanosecond)
        Thread.pass
        t1 = Process.clock_gettime(MONO, :nanosecond)
        starts[i] = t0
        t1 - t0
      end
    ),
    WaitMethod.new(
      'Queue#pop-timeout', 'oneshot',
      'Queue#pop(timeout: d / 1e9) on an empty queue (Ruby 3.2+): Float seconds, nobody pushes',
      ->(d) { d / 1e9 },
      lambda do |a, starts, i|
        t0 = Process.clock_gettime(MONO, :nanosecond)
        QUEUE.pop(timeout: a)
        t1 = Process.clock_gettime(MONO, :nanosecond)
        starts[i] = t0
        t1 - t0
      end,
      queue_pop_timeout_reason
    )
  ].freeze

  class UsageError < StandardError; end

  VALUE_FLAGS = %w[--method --durations-ns --count --budget-ns --warmup --max-count --period-ns].freeze

  module_function

  # MCL_CURRENT | MCL_FUTURE (asm-generic values: Linux on x86, ARM, RISC-V).
  MCL_CURRENT_FUTURE = 1 | 2

  # The mlockall function where --mlock is offered: MRI on Linux through Fiddle (the
  # standard library's C calls). Not on JRuby: locking the JVM would lock its whole heap
  # reservation (gigabytes).
  def mlockall_function
    return @mlockall if defined?(@mlockall)

    @mlockall =
      begin
        raise LoadError unless RUBY_ENGINE == 'ruby' && RbConfig::CONFIG['host_os'].include?('linux') &&
                               RbConfig::CONFIG['host_cpu'].match?(/\A(x86_64|i[3-6]86|aarch64|arm|riscv)/)

        require 'fiddle'
        Fiddle::Function.new(Fiddle::Handle::DEFAULT['mlockall'], [Fiddle::TYPE_INT], Fiddle::TYPE_INT)
      rescue LoadError, Fiddle::DLError, NameError
        nil
      end
  end

  # Whether --timestamps is offered: on Linux, Process.clock_gettime(CLOCK_MONOTONIC) is
  # clock_gettime(CLOCK_MONOTONIC) as an absolute count of ns on MRI, and System.nanoTime
  # (the same clock on HotSpot) on JRuby: the kernel trace's clock.
  def timestamps_offered?
    RbConfig::CONFIG['host_os'].include?('linux')
  end

  # The optional arguments this probe takes (spec: the --list header's "options").
  def options
    opts = []
    opts << 'mlock' if mlockall_function
    opts << 'timestamps' if timestamps_offered?
    opts
  end

  # The kernel id of the calling thread (/proc/thread-self is PID/task/TID), or nil. The
  # main thread measures every method, on MRI and on JRuby.
  def kernel_thread_id
    tid = Integer(File.readlink('/proc/thread-self').split('/').last, 10)
    tid.positive? ? tid : nil
  rescue SystemCallError, ArgumentError, NotImplementedError
    nil
  end

  # Keeps every page, now and later, in RAM; raises SystemCallError.
  def lock_memory
    return if mlockall_function.call(MCL_CURRENT_FUTURE).zero?

    raise SystemCallError.new('mlockall(MCL_CURRENT | MCL_FUTURE)', Fiddle.last_error)
  end

  def parse_number(flag, text)
    raise UsageError, "#{flag}: empty number" if text.empty?
    unless text.match?(/\A[0-9]+\z/)
      raise UsageError, "#{flag}: malformed number '#{text}' (expected a non-negative decimal integer)"
    end

    v = Integer(text, 10)
    raise UsageError, "#{flag}: number '#{text}' is too large" if v > MAX_NUMBER

    v
  end

  def parse_list(flag, text)
    raise UsageError, "#{flag}: empty list" if text.empty?

    text.split(',', -1).map do |item|
      raise UsageError, "#{flag}: empty element in list '#{text}'" if item.empty?

      parse_number(flag, item)
    end
  end

  def parse_args(argv)
    seen = {}
    list = false
    mlock = false
    timestamps = false
    i = 0
    while i < argv.length
      a = argv[i]
      if a == '--list'
        raise UsageError, '--list given twice' if list

        list = true
      elsif a == '--mlock' && mlockall_function
        raise UsageError, '--mlock given twice' if mlock

        mlock = true
      elsif a == '--timestamps' && timestamps_offered?
        raise UsageError, '--timestamps given twice' if timestamps

        timestamps = true
      elsif VALUE_FLAGS.include?(a)
        raise UsageError, "#{a} given twice" if seen.key?(a)
        raise UsageError, "#{a}: missing value" if i + 1 >= argv.length

        i += 1
        seen[a] = argv[i]
      elsif a.start_with?('-')
        raise UsageError, "unknown flag '#{a}'"
      else
        raise UsageError, "unexpected argument '#{a}'"
      end
      i += 1
    end

    if list
      raise UsageError, "--list takes no other flags (got #{seen.keys.join(', ')})" unless seen.empty?
      raise UsageError, '--list takes no other flags (got --mlock)' if mlock
      raise UsageError, '--list takes no other flags (got --timestamps)' if timestamps

      return { list: true }
    end

    name = seen['--method']
    raise UsageError, 'missing --method (or --list)' if name.nil?

    m = METHODS.find { |x| x.name == name }
    raise UsageError, "unknown method '#{name}' (see --list)" if m.nil?

    c = { list: false, method: m, warmup: 0, max_count: DEFAULT_MAX_COUNT, mlock: mlock, timestamps: timestamps }
    c[:durations] = parse_list('--durations-ns', seen['--durations-ns']) if seen.key?('--durations-ns')
    if seen.key?('--count')
      c[:count] = parse_number('--count', seen['--count'])
      raise UsageError, "--count: '#{seen['--count']}' must be at least 1" if c[:count] < 1
      if c[:count] > MAX_SAMPLES
        raise UsageError, "--count: '#{seen['--count']}' exceeds this probe's limit of #{MAX_SAMPLES} samples per cell"
      end
    end
    if seen.key?('--budget-ns')
      c[:budget] = parse_number('--budget-ns', seen['--budget-ns'])
      raise UsageError, "--budget-ns: '#{seen['--budget-ns']}' must be at least 1" if c[:budget] < 1
    end
    if seen.key?('--warmup')
      c[:warmup] = parse_number('--warmup', seen['--warmup'])
      if c[:warmup] > MAX_SAMPLES
        raise UsageError, "--warmup: '#{seen['--warmup']}' exceeds this probe's limit of #{MAX_SAMPLES}"
      end
    end
    if seen.key?('--max-count')
      c[:max_count] = parse_number('--max-count', seen['--max-count'])
      raise UsageError, "--max-count: '#{seen['--max-count']}' must be at least 1" if c[:max_count] < 1
      if c[:max_count] > MAX_SAMPLES
        raise UsageError, "--max-count: '#{seen['--max-count']}' exceeds this probe's limit of " \
                          "#{MAX_SAMPLES} samples per cell"
      end
    end
    if seen.key?('--period-ns')
      period = parse_number('--period-ns', seen['--period-ns'])
      raise UsageError, "--period-ns: '#{seen['--period-ns']}' must be at least 1" if period < 1

      # This probe has no periodic methods, so --period-ns is never valid.
      raise UsageError, "--period-ns is not valid for #{m.kind} method '#{m.name}' (use --durations-ns)"
    end
    raise UsageError, "#{m.kind} method '#{m.name}' needs --durations-ns" unless c.key?(:durations)
    raise UsageError, '--count and --budget-ns given together (choose one)' if c.key?(:count) && c.key?(:budget)
    raise UsageError, 'one of --count or --budget-ns is required' unless c.key?(:count) || c.key?(:budget)

    c
  end

  def json_string(s)
    out = +'"'
    s.to_s.each_char do |ch|
      out << case ch
             when '"' then '\\"'
             when '\\' then '\\\\'
             when "\n" then '\\n'
             when "\r" then '\\r'
             when "\t" then '\\t'
             else
               o = ch.ord
               o < 0x20 || o > 0x7e ? format('\\u%04x', o) : ch
             end
    end
    out << '"'
  end

  def implementation
    case RUBY_ENGINE
    when 'ruby' then 'MRI'
    when 'jruby' then 'JRuby'
    when 'truffleruby' then 'TruffleRuby'
    else RUBY_ENGINE
    end
  end

  def platform
    os = RbConfig::CONFIG['host_os'].to_s.sub(/-gnu\z/, '')
    cpu = RbConfig::CONFIG['host_cpu'].to_s
    RUBY_ENGINE == 'jruby' ? "#{os} #{cpu} (JVM)" : "#{os} #{cpu}"
  end

  # The header; a measurement's also names its measuring thread (`tid`) and says whether
  # timestamps follow.
  def header(method = nil, mode = nil, tid: nil, timestamps: false)
    h = +'{"protocol":' << json_string(PROTOCOL)
    h << ',"runtime":"ruby"'
    h << ',"implementation":' << json_string(implementation)
    h << ',"runtime_version":' << json_string(RUBY_DESCRIPTION)
    h << ',"clock":"Process.clock_gettime(CLOCK_MONOTONIC, :nanosecond)"'
    h << ',"platform":' << json_string(platform)
    if method
      h << ',"method":' << json_string(method)
      h << ',"mode":' << json_string(mode)
      h << ',"tid":' << tid.to_s if tid
      h << ',"timestamps":true' if timestamps
    elsif !options.empty?
      h << ',"options":[' << options.map { |o| json_string(o) }.join(',') << ']'
    end
    h << ',"ruby_engine":' << json_string(RUBY_ENGINE)
    h << ',"ruby_version":' << json_string(RUBY_VERSION)
    h << '}'
  end

  def print_list(out)
    buf = +''
    buf << header << "\n"
    METHODS.each do |m|
      buf << '{"method":' << json_string(m.name)
      buf << ',"kind":' << json_string(m.kind)
      buf << ',"available":' << (m.reason ? 'false' : 'true')
      buf << ',"reason":' << json_string(m.reason) if m.reason
      buf << ',"description":' << json_string(m.description)
      buf << "}\n"
    end
    buf << "end\n"
    out.write(buf)
    out.flush
  end

  # Appends `tag value` lines for values[0...n], each with its call's start when
  # `starts` is given (--timestamps).
  def append_lines(buf, tag, values, starts, n)
    k = 0
    while k < n
      buf << tag << ' ' << values[k].to_s
      buf << ' ' << starts[k].to_s if starts
      buf << "\n"
      k += 1
    end
  end

  def run_oneshot(c, out)
    m = c[:method]
    once = m.once
    stamps = c[:timestamps]
    out.write(header(m.name, 'oneshot', tid: kernel_thread_id, timestamps: stamps) << "\n")
    out.flush
    warm = Array.new(c[:warmup], 0)
    warm_starts = Array.new(c[:warmup], 0)
    cap = c[:count] || c[:max_count]
    samples = Array.new(cap, 0)
    starts = Array.new(cap, 0)
    budget = c[:budget]
    c[:durations].each do |d|
      a = m.prep.call(d)
      i = 0
      while i < warm.length
        warm[i] = once.call(a, warm_starts, i)
        i += 1
      end
      n = 0
      if budget.nil?
        while n < cap
          samples[n] = once.call(a, starts, n)
          n += 1
        end
      else
        sum = 0
        while n < cap && sum < budget
          e = once.call(a, starts, n)
          samples[n] = e
          n += 1
          sum += e
        end
      end
      buf = +"cell #{d}\n"
      append_lines(buf, 'w', warm, stamps && warm_starts, warm.length)
      append_lines(buf, 's', samples, stamps && starts, n)
      buf << "done #{d} #{n}\n"
      out.write(buf)
      out.flush
    end
    out.write("end\n")
    out.flush
  end

  def main(argv)
    begin
      c = parse_args(argv)
    rescue UsageError => e
      $stderr.puts "probe: #{e.message}"
      exit 2
    end
    out = $stdout
    out.sync = false
    if c[:list]
      print_list(out)
      return
    end
    m = c[:method]
    if m.reason
      $stderr.puts "probe: method '#{m.name}' is unavailable: #{m.reason}"
      exit 3
    end
    # Before the header: the harness reads what is in force once it is out.
    begin
      lock_memory if c[:mlock]
    rescue SystemCallError => e
      $stderr.puts "probe: #{e.message}"
      exit 1
    end
    run_oneshot(c, out)
  end
end

SleeplabProbe.main(ARGV) if $PROGRAM_NAME == __FILE__
